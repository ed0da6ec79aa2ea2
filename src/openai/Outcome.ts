/**
 * What both endpoints do with a turn: a turn that did not complete as its error, and a started
 * turn as a Server-Sent Events body of the frames an endpoint makes of its events and outcome.
 */
import { HttpServerResponse } from "@effect/platform"
import { Effect, type Scope, Stream } from "effect"
import type { AgentEvent } from "../agent/Events.ts"
import type { TurnResult } from "../agent/Turn.ts"
import type { RunOutcome } from "../runs/Runs.ts"
import { keepaliveEvery } from "../runs/Sse.ts"
import type { CompletionTurn } from "./Completions.ts"
import { CompletionCancelled, CompletionFailed, CompletionInterrupted } from "./Errors.ts"

const encoder = new TextEncoder()

/** A turn that did not complete, as the error its outcome is. */
export const failureOf = (outcome: Exclude<RunOutcome, { _tag: "complete" }>) => {
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

export const sessionHeaders = (sessionId: string | null): Record<string, string> => (sessionId ? { "x-session-id": sessionId } : {})

export interface FrameMaker {
  readonly onEvent: (event: AgentEvent) => Array<string>
  readonly onComplete: (result: TurnResult) => Array<string>
  readonly onFailure: (error: ReturnType<typeof failureOf>) => Array<string>
}

/** The turn's frames as an SSE response, with keepalive comments that keep idle proxies from closing a long turn. */
export const sseResponse = (
  started: Effect.Effect<CompletionTurn, never, Scope.Scope>,
  frames: FrameMaker,
  sessionId: string | null
) => {
  const body = Stream.unwrapScoped(
    Effect.map(started, (turn) =>
      Stream.concat(
        Stream.mapConcat(turn.events, frames.onEvent),
        Stream.mapConcat(Stream.fromEffect(turn.outcome), (outcome) =>
          outcome._tag === "complete" ? frames.onComplete(outcome.result) : frames.onFailure(failureOf(outcome)))
      ))
  )
  // OpenAI's clients skip comments.
  const keepalive = Stream.tick(keepaliveEvery).pipe(Stream.drop(1), Stream.as(": keepalive\n\n"))
  return HttpServerResponse.stream(
    Stream.merge(body, keepalive, { haltStrategy: "left" }).pipe(Stream.map((text) => encoder.encode(text))),
    {
      contentType: "text/event-stream",
      headers: { "cache-control": "no-cache", "x-accel-buffering": "no", ...sessionHeaders(sessionId) }
    }
  )
}
