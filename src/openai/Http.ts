/**
 * The OpenAI-compatible handlers, and the middleware that gives every error on a `/v1/` path
 * OpenAI's shape.
 */
import { HttpApiBuilder, HttpApp, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"
import { randomUUID } from "node:crypto"
import { CairnApi } from "../Api.ts"
import { Principal } from "../auth/Principal.ts"
import { type CompletionIdentity, completions as answerOf, makeChunkStream } from "./Chunks.ts"
import { Completions } from "./Completions.ts"
import { toOpenAiError, unsupported } from "./Errors.ts"
import { failureOf, sessionHeaders, sseResponse } from "./Outcome.ts"
import { makeResponses } from "./ResponsesHttp.ts"

export const OpenAiHttpLive = HttpApiBuilder.group(CairnApi, "openai", (handlers) =>
  Effect.gen(function*() {
    const completions = yield* Completions
    const responses = yield* makeResponses
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
          const choices = payload.n ?? 1
          const bound = headers["x-cairn-session"] !== undefined || payload.user !== undefined
          if (choices > 1 && (payload.stream || bound)) {
            return yield* unsupported(
              "n",
              bound
                ? "A session takes one answer per message: n > 1 is for stateless calls only"
                : "n > 1 is not streamed: ask for a blocking answer"
            )
          }
          const accepted = yield* completions.accept(payload, headers["x-cairn-session"], principal)
          const identity: CompletionIdentity = { id: `chatcmpl-${randomUUID()}`, created: created(new Date()), model: payload.model }
          if (payload.stream) {
            const chunks = makeChunkStream(identity, payload.stream_options?.include_usage === true)
            return sseResponse(accepted.turn, chunks, accepted.sessionId)
          }
          // n stateless turns, side by side: each its own run of the bot, none stored.
          const outcomes = yield* Effect.forEach(
            Array.from({ length: choices }),
            () =>
              Effect.scoped(Effect.flatMap(accepted.turn, (turn) =>
                turn.outcome)),
            { concurrency: "unbounded" }
          )
          const results = []
          for (const outcome of outcomes) {
            if (outcome._tag !== "complete") return yield* failureOf(outcome)
            results.push(outcome.result)
          }
          return HttpServerResponse.unsafeJson(answerOf(identity, results), { headers: sessionHeaders(accepted.sessionId) })
        }))
      .handle("responses", ({ payload }) => Effect.flatMap(Principal, (principal) => responses(payload, principal)))
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
