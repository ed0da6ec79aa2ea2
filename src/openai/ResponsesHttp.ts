/**
 * `POST /v1/responses` as a chat completion: its input read as chat messages (ResponsesInput.ts)
 * and accepted by `Completions`, bound to a session as a response id says.
 *
 * - `previous_response_id` (or an `item_reference` to a stored response's item): that response's
 *   session, where only the new part of the input is read; unknown or out of reach, OpenAI's 404.
 * - Neither, `store` not false: a new session, seeded with the input's history, so the answer can
 *   be continued by its id.
 * - Neither, `store: false`: a stateless turn; nothing but usage is stored.
 */
import { HttpServerResponse } from "@effect/platform"
import { Effect, Either } from "effect"
import { randomUUID } from "node:crypto"
import type { PrincipalShape } from "../auth/Principal.ts"
import { ValidationError, ValidationIssue } from "../contract/Errors.ts"
import type { NewMessage } from "../sessions/Model.ts"
import { Sessions } from "../sessions/Sessions.ts"
import { answerFormatExtra, chatFormatOf } from "./AnswerFormats.ts"
import { Completions } from "./Completions.ts"
import { readConversation } from "./Conversation.ts"
import { responseNotFound } from "./Errors.ts"
import type { ChatCompletionRequest } from "./Model.ts"
import { failureOf, sessionHeaders, sseResponse } from "./Outcome.ts"
import { callerToolsOf, inputLocation, readInput, responseIds, storedIdOf } from "./ResponsesInput.ts"
import type { ResponseRequest } from "./ResponsesModel.ts"
import { completedResponse, makeResponseEvents, type ResponseIdentity } from "./ResponsesOutput.ts"

/** Validation issues about the chat messages made of the input, located in the input. */
const located = (origins: ReadonlyArray<number | null>) => (error: ValidationError) =>
  new ValidationError({
    detail: error.detail.map((issue) => new ValidationIssue({ ...issue, loc: inputLocation(issue.loc, origins) }))
  })

export const makeResponses = Effect.gen(function*() {
  const completions = yield* Completions
  const sessions = yield* Sessions

  /** The session a stored response's id names, when the caller reaches it; else OpenAI's 404. */
  const sessionNamed = (id: string, principal: PrincipalShape, param: string) => {
    const stored = storedIdOf(id)
    if (!stored) return Effect.fail(responseNotFound(id, param))
    return sessions.reach(principal, stored.sessionId).pipe(
      Effect.as(stored.sessionId),
      Effect.catchTags({
        SessionNotFound: () => Effect.fail(responseNotFound(id, param)),
        Forbidden: () => Effect.fail(responseNotFound(id, param))
      })
    )
  }

  /**
   * A new session holding the input's history (all but its new part), so that the turn reads the
   * conversation the caller sent; nothing when the input has no history, or does not read (the
   * turn's acceptance reports that).
   */
  const seed = (principal: PrincipalShape, sessionId: string, botId: string, request: ChatCompletionRequest) =>
    Effect.gen(function*() {
      const read = readConversation(request.messages)
      if (Either.isLeft(read)) return
      const rows = [...read.right.history]
      // Tool results are the turn's to store: the session then waits on the calls they answer.
      while (rows.at(-1)?.role === "tool") rows.pop()
      if (rows.length === 0) return
      yield* sessions.getOrCreateWithId(principal, sessionId, "openai", botId, null)
      for (const row of rows) {
        const message: NewMessage = {
          role: row.role,
          content: row.content,
          tool_calls: row.tool_calls,
          tool_call_id: row.tool_call_id,
          attachments: row.attachments ?? [],
          metadata: { seeded_by: "openai_responses" }
        }
        yield* sessions.append(sessionId, message)
      }
    })

  /** Answers a Responses API request: the response object, or its events with `stream: true`. */
  return (payload: ResponseRequest, principal: PrincipalShape) =>
    Effect.gen(function*() {
      const format = chatFormatOf(payload.text?.format)
      yield* answerFormatExtra(format, "text.format")
      const bot = yield* completions.botFor(payload.model, principal)
      const { answeringPrevious, messages, origins, references } = readInput(payload)
      if (messages.length === 0) {
        return yield* ValidationError.single(["body", "input"], "The input needs a message or a function call output", "missing")
      }
      const request: ChatCompletionRequest = {
        model: payload.model,
        messages,
        stream: payload.stream ?? false,
        tools: callerToolsOf(payload.tools ?? []),
        ...(format ? { response_format: format } : {})
      }
      const previous = payload.previous_response_id ?? references.findLast((id) => storedIdOf(id) !== null) ?? null
      let sessionId: string | undefined
      if (previous !== null) {
        sessionId = yield* sessionNamed(previous, principal, payload.previous_response_id ? "previous_response_id" : "input")
      } else if (answeringPrevious.length > 0) {
        return yield* ValidationError.single(
          ["body", "input", answeringPrevious[0]!],
          "Answers no function call of the input: send previous_response_id to answer a stored response's call",
          "unknown_tool_call"
        )
      } else if (payload.store !== false) {
        sessionId = randomUUID()
        yield* seed(principal, sessionId, bot.id, request)
      }
      const accepted = yield* completions.accept(request, sessionId, principal).pipe(
        Effect.mapError((error) => (error._tag === "ValidationError" ? located(origins)(error) : error))
      )
      const identity: ResponseIdentity = {
        ids: responseIds(accepted.sessionId && accepted.runId ? { sessionId: accepted.sessionId, runId: accepted.runId } : null),
        createdAt: Math.floor(Date.now() / 1000),
        model: payload.model,
        instructions: payload.instructions ?? null,
        previousResponseId: payload.previous_response_id ?? null,
        store: accepted.sessionId !== null,
        tools: payload.tools ?? []
      }
      if (payload.stream) return sseResponse(accepted.turn, makeResponseEvents(identity), accepted.sessionId)
      const outcome = yield* Effect.scoped(Effect.flatMap(accepted.turn, (turn) => turn.outcome))
      if (outcome._tag !== "complete") return yield* failureOf(outcome)
      return HttpServerResponse.unsafeJson(completedResponse(identity, outcome.result), { headers: sessionHeaders(accepted.sessionId) })
    })
})
