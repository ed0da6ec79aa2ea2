/** `/api/v1/admin/dead-letters`: inbound items that exhausted their attempts, for a person to retry or discard. */
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Authentication } from "../auth/Authentication.ts"
import { RequiredScope } from "../auth/RequiredScope.ts"
import { detailBody } from "../contract/Errors.ts"
import { DeadLetterConflict, DeadLetterNotFound } from "./Errors.ts"
import { deadLetterPath, DeadLetterQuery, DeadLetters, InboundItem } from "./Model.ts"

/** A person's move on one dead letter (retry or discard): the same path, answer, errors and scope. */
const deadLetterMove = <const Name extends "retry" | "discard">(name: Name, description: string) =>
  HttpApiEndpoint.post(name, `/api/v1/admin/dead-letters/:id/${name}`)
    .setPath(deadLetterPath)
    .addSuccess(InboundItem)
    .addError(detailBody(DeadLetterNotFound))
    .addError(detailBody(DeadLetterConflict))
    .annotate(RequiredScope, "tasks:write")
    .annotate(OpenApi.Description, `${description}. 409 when it is not a dead letter (any more)`)

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
    deadLetterMove(
      "retry",
      "Try a dead letter again: a failed run is queued again, a delivery that gave up is tried again from its first attempt (one recorded `uncertain` may then show twice: it is retried only when a person asks), an item its integration handles itself goes back to it at once (the handler it registered)"
    )
  )
  .add(
    deadLetterMove(
      "discard",
      "Give up on a dead letter: it is kept as `discarded` (its source's id stays known, so it is never acted on again)"
    )
  )
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Dead letters")
{}
