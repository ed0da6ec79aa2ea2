/** What workspaces can refuse, each with its HTTP status. */
import { HttpApiSchema } from "@effect/platform"
import { Schema } from "effect"

export class WorkspaceFileNotFound extends Schema.TaggedError<WorkspaceFileNotFound>()(
  "WorkspaceFileNotFound",
  { detail: Schema.String },
  HttpApiSchema.annotations({ status: 404, description: "No file at that path in the workspace" })
) {}

export class WorkspaceConflict extends Schema.TaggedError<WorkspaceConflict>()(
  "WorkspaceConflict",
  { detail: Schema.String },
  HttpApiSchema.annotations({
    status: 409,
    description: "The path is a directory, a parent is a file, the file is too large to read, or the workspace is off"
  })
) {}
