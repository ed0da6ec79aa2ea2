/** What the repository routes answer: the configured repository (REPO_DIR) and its pulls, as audited. */
import { Schema } from "effect"
import { limitParam, queryParams } from "../contract/Params.ts"
import { TimestampText } from "../contract/Time.ts"

/** What a repository pull brought in, by kind: the ids synced from the pulled files. */
export const RepositorySynced = Schema.Struct({
  bots: Schema.Array(Schema.String),
  skills: Schema.Array(Schema.String),
  workflows: Schema.Array(Schema.String)
}).annotations({ identifier: "RepositorySynced" })
export type RepositorySynced = typeof RepositorySynced.Type

/** One pull of the configured repository (REPO_DIR), as audited. */
export class RepositoryPull extends Schema.Class<RepositoryPull>("RepositoryPull")({
  id: Schema.UUID,
  /** updated (new commits, files synced), current (nothing new) or failed (`error` says why). */
  status: Schema.Literal("updated", "current", "failed"),
  /** Who asked: `kind:id` of the credential (a key, a user). */
  requested_by: Schema.String,
  before_commit: Schema.NullOr(Schema.String),
  after_commit: Schema.NullOr(Schema.String),
  /** Paths the pull changed, relative to the repository. */
  changed_files: Schema.Array(Schema.String),
  synced: RepositorySynced,
  error: Schema.NullOr(Schema.String),
  pulled_at: TimestampText
}) {}

/** The configured repository as it is now, with its last pulls. */
export class RepositoryStatus extends Schema.Class<RepositoryStatus>("RepositoryStatus")({
  dir: Schema.String,
  branch: Schema.NullOr(Schema.String),
  head: Schema.NullOr(Schema.String),
  /** The branch's upstream (`origin/main`), credentials in its URL masked. */
  upstream: Schema.NullOr(Schema.String),
  pulls: Schema.Array(RepositoryPull)
}) {}

export const RepositoryPullsQuery = queryParams({
  limit: limitParam()
})
