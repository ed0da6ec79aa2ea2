/**
 * The OpenAI-compatible handlers, and the middleware that gives every error on a `/v1/` path
 * OpenAI's shape.
 */
import { HttpApiBuilder, HttpApp, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect, Stream } from "effect"
import { randomUUID } from "node:crypto"
import { CairnApi } from "../Api.ts"
import { Principal } from "../auth/Principal.ts"
import type { RunOutcome } from "../runs/Runs.ts"
import { keepaliveEvery } from "../runs/Sse.ts"
import { completion, type CompletionIdentity, makeChunkStream } from "./Chunks.ts"
import { Completions } from "./Completions.ts"
import { CompletionCancelled, CompletionFailed, CompletionInterrupted, toOpenAiError } from "./Errors.ts"

const encoder = new TextEncoder()

/** A turn that did not complete, as the error its outcome is. */
const failureOf = (outcome: Exclude<RunOutcome, { _tag: "complete" }>) => {
  switch (outcome._tag) {
    case "failed":
      return new CompletionFailed.Error({ message: outcome.message, type: "server_error", param: null, code: "run_failed" })
    case "cancelled":
      return new CompletionCancelled.Error({
        message: "The turn was cancelled",
        type: "invalid_request_error",
        param: null,
        code: "cancelled"
      })
    case "interrupted":
      return new CompletionInterrupted.Error({ message: outcome.message, type: "server_error", param: null, code: "interrupted" })
  }
}

const sessionHeaders = (sessionId: string | null): Record<string, string> => (sessionId ? { "x-session-id": sessionId } : {})

export const OpenAiHttpLive = HttpApiBuilder.group(CairnApi, "openai", (handlers) =>
  Effect.gen(function*() {
    const completions = yield* Completions
    const created = (date: Date) => Math.floor(date.getTime() / 1000)

    return handlers
      .handle("models", () =>
        Effect.flatMap(Principal, (principal) =>
          Effect.map(completions.models(principal), (bots) => ({
            object: "list" as const,
            data: bots.map((bot) => ({ id: bot.id, object: "model" as const, created: created(bot.created_at), owned_by: "cairn" }))
          }))))
      .handle("model", ({ path }) =>
        Effect.flatMap(Principal, (principal) =>
          Effect.map(completions.botFor(path.model, principal), (bot) => ({
            id: bot.id,
            object: "model" as const,
            created: created(bot.created_at),
            owned_by: "cairn"
          }))))
      .handle("completions", ({ headers, payload }) =>
        Effect.gen(function*() {
          const principal = yield* Principal
          const accepted = yield* completions.accept(payload, headers["x-cairn-session"], principal)
          const identity: CompletionIdentity = { id: `chatcmpl-${randomUUID()}`, created: created(new Date()), model: payload.model }
          if (!payload.stream) {
            const outcome = yield* Effect.scoped(Effect.flatMap(accepted.turn, (turn) =>
              turn.outcome))
            if (outcome._tag !== "complete") {
              return yield* failureOf(outcome)
            }
            return HttpServerResponse.unsafeJson(completion(identity, outcome.result), { headers: sessionHeaders(accepted.sessionId) })
          }
          const chunks = makeChunkStream(identity, payload.stream_options?.include_usage === true)
          const frames = Stream.unwrapScoped(
            Effect.map(accepted.turn, (turn) =>
              Stream.concat(
                Stream.mapConcat(turn.events, chunks.onEvent),
                Stream.mapConcat(Stream.fromEffect(turn.outcome), (outcome) =>
                  outcome._tag === "complete" ? chunks.onComplete(outcome.result) : chunks.onFailure(failureOf(outcome)))
              ))
          )
          // Comments keep idle proxies from closing a long turn; OpenAI's clients skip them.
          const keepalive = Stream.tick(keepaliveEvery).pipe(Stream.drop(1), Stream.as(": keepalive\n\n"))
          const body = Stream.merge(frames, keepalive, { haltStrategy: "left" }).pipe(Stream.map((text) =>
            encoder.encode(text)
          ))
          return HttpServerResponse.stream(body, {
            contentType: "text/event-stream",
            headers: { "cache-control": "no-cache", "x-accel-buffering": "no", ...sessionHeaders(accepted.sessionId) }
          })
        }))
  }))

/** The surface whose errors are OpenAI's. */
const isOpenAiPath = (url: string) => url === "/v1" || url.startsWith("/v1/") || url.startsWith("/v1?")

const decoder = new TextDecoder()

/**
 * An error after which a retry would run the turn again (a bound call's message is already stored,
 * a tool may have acted): the OpenAI clients retry 409 and 5xx on their own unless told not to.
 */
const notRetried = (status: number, code: unknown) => status >= 500 || code === "cancelled"

/**
 * `{detail}` as OpenAI's error body, keeping the status and headers (Retry-After, CORS,
 * WWW-Authenticate); then `x-should-retry: false` where a retry would repeat the turn.
 */
const reshape = (response: HttpServerResponse.HttpServerResponse) => {
  if (response.status < 400 || response.body._tag !== "Uint8Array") return response
  let parsed: unknown
  try {
    parsed = JSON.parse(decoder.decode(response.body.body))
  } catch {
    return response
  }
  if (parsed === null || typeof parsed !== "object") return response
  let shaped = response
  let code: unknown = null
  if ("detail" in parsed) {
    const body = toOpenAiError(response.status, parsed.detail)
    code = body.error.code
    const { "content-type": _type, "content-length": _length, ...headers } = response.headers
    shaped = HttpServerResponse.setHeaders(HttpServerResponse.unsafeJson(body, { status: response.status }), headers)
  } else if ("error" in parsed) {
    code = (parsed.error as { code?: unknown } | null)?.code
  }
  return notRetried(response.status, code) ? HttpServerResponse.setHeader(shaped, "x-should-retry", "false") : shaped
}

const reshapeBeforeSending = HttpApp.appendPreResponseHandler((_request, response) => Effect.succeed(reshape(response)))

/**
 * Gives the errors answered on a `/v1/` path OpenAI's shape. A pre-response handler, because the
 * platform writes an error's response before an outer middleware sees it.
 */
export const openAiErrorShape = <E, R>(app: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>) =>
  Effect.flatMap(
    HttpServerRequest.HttpServerRequest,
    (request) => (isOpenAiPath(request.url) ? Effect.zipRight(reshapeBeforeSending, app) : app)
  )
