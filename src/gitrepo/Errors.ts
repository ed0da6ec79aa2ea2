/** What a repository pull can refuse, each with its HTTP status. */
import { HttpApiSchema } from "@effect/platform"
import { Schema } from "effect"

export class RepositoryNotConfigured extends Schema.TaggedError<RepositoryNotConfigured>()(
  "RepositoryNotConfigured",
  { detail: Schema.String },
  HttpApiSchema.annotations({ status: 409, description: "No repository is configured (REPO_DIR), or it is not a git working copy" })
) {}

export class RepositoryNotFastForward extends Schema.TaggedError<RepositoryNotFastForward>()(
  "RepositoryNotFastForward",
  { detail: Schema.String },
  HttpApiSchema.annotations({
    status: 409,
    description: "The pull is not a fast-forward (the working copy has diverged or has local changes): nothing was changed"
  })
) {}

export class RepositoryUnreachable extends Schema.TaggedError<RepositoryUnreachable>()(
  "RepositoryUnreachable",
  { detail: Schema.String },
  HttpApiSchema.annotations({ status: 502, description: "The repository's remote could not be fetched from: nothing was changed" })
) {}

export class RepositoryPullRunning extends Schema.TaggedError<RepositoryPullRunning>()(
  "RepositoryPullRunning",
  { detail: Schema.String },
  HttpApiSchema.annotations({ status: 409, description: "Another pull of the repository is running" })
) {}
