/**
 * Server-Sent Events framing: each event is `id: <seq>` and `data: <json>` then a blank line; a
 * `: keepalive` comment goes out every 15 s so proxies keep the connection open.
 */
import { HttpServerResponse } from "@effect/platform"
import { Duration, Effect, Schema, Stream } from "effect"
import { AgentEvent, type SequencedEvent } from "../agent/Events.ts"

export const keepaliveEvery = Duration.seconds(15)

// Compiled once (every streamed token goes through it). An event that does not encode is a bug at
// its emit site: it throws, and the stream ends as any failed stream does, with `error` then `response`.
const encodeEvent = Schema.encodeSync(AgentEvent)

/** One event's frame; its JSON is the schema's encoding, so the wire holds exactly what `AgentEvent` declares. */
export const frame = (item: SequencedEvent) => `id: ${item.seq}\ndata: ${JSON.stringify(encodeEvent(item.event))}\n\n`

const encoder = new TextEncoder()

/** How a stream ends that could not answer: the reason, then the (empty) `response` that always comes last. */
export const endedWithError = (message: string, sessionId: string): readonly [SequencedEvent["event"], SequencedEvent["event"]] => [
  { type: "error", message },
  { type: "response", text: "", tools_used: [], client_actions: [], session_id: sessionId }
]

/** An SSE response from a stream of events; a failure becomes a final `error` event. */
export const response = <E>(events: Stream.Stream<SequencedEvent, E>, sessionId?: string) => {
  let last = 0
  const framed = events.pipe(
    Stream.tap((item) => Effect.sync(() => (last = item.seq))),
    Stream.map(frame),
    Stream.catchAllCause((cause) =>
      Stream.fromEffect(
        Effect.as(
          Effect.logError("Event stream failed", cause),
          // `response` is always last, even when the stream itself fails.
          endedWithError("The event stream failed", sessionId ?? "")
            .map((event, index) => frame({ seq: last + 1 + index, event }))
            .join("")
        )
      )
    )
  )
  const keepalive = Stream.tick(keepaliveEvery).pipe(
    Stream.drop(1),
    Stream.map(() => ": keepalive\n\n")
  )
  const body = Stream.merge(framed, keepalive, { haltStrategy: "left" }).pipe(Stream.map((text) => encoder.encode(text)))
  return HttpServerResponse.stream(body, {
    contentType: "text/event-stream",
    headers: {
      "cache-control": "no-cache",
      "x-accel-buffering": "no",
      ...(sessionId ? { "x-session-id": sessionId } : {})
    }
  })
}

/** A few events, numbered from 1, for answers that need no run (passive, queued, unheard voice). */
export const fixed = (...events: ReadonlyArray<SequencedEvent["event"]>) =>
  Stream.fromIterable(events.map((event, index): SequencedEvent => ({ seq: index + 1, event })))
