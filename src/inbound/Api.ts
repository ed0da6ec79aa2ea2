/** `/api/v1/admin/dead-letters`: inbound items that exhausted their attempts, for a person to retry or discard. */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Authentication } from "../auth/Authentication.ts"
import { RequiredScope } from "../auth/RequiredScope.ts"
import { detailBody } from "../contract/Errors.ts"
import { DeadLetterConflict, DeadLetterNotFound } from "./Errors.ts"
import { deadLetterPath, DeadLetterQuery, DeadLetters, InboundItem } from "./Model.ts"

export class DeadLettersApi extends HttpApiGroup.make("deadLetters")
  .add(
    HttpApiEndpoint.get("list", "/api/v1/admin/dead-letters")
      .setUrlParams(DeadLetterQuery)
      .addSuccess(DeadLetters)
      .annotate(RequiredScope, "tasks:read")
      .annotate(
        OpenApi.Description,
        "Inbound items (a bridge message, a mail, an integration's webhook delivery, a result delivery) that exhausted their attempts, newest first, each with its last error; filter by source, integration, channel_id (limit 1-500, default 50). `counts` has the dead letters per source, whatever the filter"
      )
  )
  .add(
    HttpApiEndpoint.post("retry", "/api/v1/admin/dead-letters/:id/retry")
      .setPath(deadLetterPath)
      .addSuccess(InboundItem)
      .addError(detailBody(DeadLetterNotFound))
      .addError(detailBody(DeadLetterConflict))
      .annotate(RequiredScope, "tasks:write")
      .annotate(
        OpenApi.Description,
        "Try a dead letter again: a failed run is queued again, a delivery that gave up is tried again from its first attempt (one recorded `uncertain` may then show twice: it is retried only when a person asks), an item its integration handles itself goes back to it at once (the handler it registered). 409 when it is not a dead letter (any more)"
      )
  )
  .add(
    HttpApiEndpoint.post("discard", "/api/v1/admin/dead-letters/:id/discard")
      .setPath(deadLetterPath)
      .addSuccess(InboundItem)
      .addError(detailBody(DeadLetterNotFound))
      .addError(detailBody(DeadLetterConflict))
      .annotate(RequiredScope, "tasks:write")
      .annotate(
        OpenApi.Description,
        "Give up on a dead letter: it is kept as `discarded` (its source's id stays known, so it is never acted on again). 409 when it is not a dead letter (any more)"
      )
  )
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Dead letters")
{}
