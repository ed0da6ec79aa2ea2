/** `/api/v1/admin/operations/repository`: the configured git repository of bots, skills and workflows, and its pulls. */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Authentication } from "../auth/Authentication.ts"
import { RequiredScope } from "../auth/RequiredScope.ts"
import { detailBody } from "../contract/Errors.ts"
import { RepositoryNotConfigured, RepositoryNotFastForward, RepositoryPullRunning, RepositoryUnreachable } from "./Errors.ts"
import { RepositoryPull, RepositoryPullsQuery, RepositoryStatus } from "./Model.ts"

export class RepositoryApi extends HttpApiGroup.make("repository")
  .add(
    HttpApiEndpoint.get("status", "/api/v1/admin/operations/repository")
      .setUrlParams(RepositoryPullsQuery)
      .addSuccess(RepositoryStatus)
      .addError(detailBody(RepositoryNotConfigured))
      .annotate(RequiredScope, "operations:read")
      .annotate(
        OpenApi.Description,
        "The configured repository (REPO_DIR, a git working copy of bots/, skills/ and workflows/): branch, head commit, upstream (credentials masked), and its last pulls, newest first (limit 1-500, default 50): the audit of who pulled what"
      )
  )
  .add(
    HttpApiEndpoint.post("pull", "/api/v1/admin/operations/repository/pull")
      .addSuccess(RepositoryPull)
      .addError(detailBody(RepositoryNotConfigured))
      .addError(detailBody(RepositoryNotFastForward))
      .addError(detailBody(RepositoryPullRunning))
      .addError(detailBody(RepositoryUnreachable))
      .annotate(RequiredScope, "operations:write")
      .annotate(
        OpenApi.Description,
        "Pull the configured repository from its upstream, fast-forward only, and sync the bots, skills and workflows it brought (a file's bot or workflow replaces the stored one unless the API has taken it over). Answers the pull as recorded: updated (commits, changed files, synced ids) or current. Refused and recorded as failed: 409 when it is not a fast-forward or has local changes, 502 when the remote cannot be fetched; nothing changes then"
      )
  )
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Repository")
{}
