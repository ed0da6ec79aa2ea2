/**
 * Follows one run's Server-Sent Events through the typed client's streaming reader (each event
 * decoded through the event Schema) until it ends (`response` or `cancelled`). When the connection
 * drops before then (a lost network, a server restart), it rejoins the run after the last event it
 * saw, so the caller sees every event exactly once: no gap, no repeat. Events numbered at or below
 * the last one seen are dropped, which also makes a replay from the start safe.
 */
import { Cause, Effect, Exit, Fiber, Option, Stream } from "effect"
import type { AgentEvent } from "../../agent/Events.ts"
import type { StreamingClient } from "../../client.ts"
import type { ChatRequest } from "../../intake/Model.ts"

export type RunStart =
  | { readonly kind: "chat"; readonly payload: typeof ChatRequest.Type }
  | { readonly kind: "rejoin"; readonly sessionId: string; readonly runId?: string }

export interface RunFollower {
  /** Stops reading (the run goes on on the server). */
  readonly close: () => void
}

export interface RunHandlers {
  readonly onEvent: (event: AgentEvent, seq: number) => void
  /** The run ended (`response` or `cancelled` seen), or it cannot be followed (`error`). */
  readonly onEnd: (error?: string) => void
  /** Connection state, for a quiet "reconnecting" notice. */
  readonly onConnection?: (connected: boolean) => void
}

const retryDelayMs = (attempt: number) => Math.min(10_000, 500 * 2 ** attempt)

export const followRun = (
  open: () => Promise<StreamingClient>,
  sessionId: string,
  start: RunStart,
  handlers: RunHandlers
): RunFollower => {
  let lastSeq = -1
  let ended = false
  let closed = false
  let fiber: Fiber.RuntimeFiber<void, unknown> | undefined
  let attempt = 0
  let sawAny = false

  const streamOf = (client: StreamingClient, first: boolean) =>
    first && start.kind === "chat"
      ? client.chat(start.payload)
      : client.rejoin(sessionId, {
        ...(lastSeq >= 0 ? { after: lastSeq } : {}),
        ...(start.kind === "rejoin" && start.runId ? { runId: start.runId } : {})
      })

  const connect = async (first: boolean) => {
    if (closed) return
    const client = await open()
    handlers.onConnection?.(true)
    fiber = Effect.runFork(
      // A rejoined stream may stay open after the run's end: the end event is where reading stops.
      Stream.runForEach(
        Stream.takeUntil(streamOf(client, first), ({ event }) => event.type === "response" || event.type === "cancelled"),
        ({ seq, event }) =>
          Effect.sync(() => {
            // `queued` comes as event 0 before the run's own events, which start at 1.
            if (seq <= lastSeq && event.type !== "queued") return
            if (event.type !== "queued") lastSeq = seq
            attempt = 0
            sawAny = true
            handlers.onEvent(event, seq)
            if (event.type === "response" || event.type === "cancelled") ended = true
          })
      )
    )
    const exit = await Effect.runPromise(Fiber.await(fiber))
    if (closed || ended) {
      if (ended) handlers.onEnd()
      return
    }
    const failure = Exit.isFailure(exit) ? Option.getOrUndefined(Cause.failureOption(exit.cause)) : undefined
    const refused = failure as { readonly _tag?: string; readonly status?: number; readonly detail?: string } | undefined
    // A refusal (4xx) will not change by asking again; nor is there a run to rejoin when the
    // message itself never got an answer.
    if ((refused?._tag === "StreamRefused" && (refused.status ?? 500) < 500) || (start.kind === "chat" && !sawAny && first)) {
      ended = true
      handlers.onEnd(refused?.detail ?? "The message could not be sent")
      return
    }
    handlers.onConnection?.(false)
    await new Promise((resolve) => setTimeout(resolve, retryDelayMs(attempt++)))
    await connect(false)
  }

  void connect(true).catch((error: unknown) => handlers.onEnd(String(error)))
  return {
    close: () => {
      closed = true
      if (fiber) Effect.runFork(Fiber.interrupt(fiber))
    }
  }
}
