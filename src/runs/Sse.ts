/**
 * Server-Sent Events framing: each event is `id: <seq>` and `data: <json>` then a blank line; a
 * `: keepalive` comment goes out every 15 s so proxies keep the connection open.
 */
import { HttpServerResponse } from "@effect/platform"
import { Cause, Duration, Effect, Exit, Runtime, Schema, Scope, Stream } from "effect"
import { Readable } from "node:stream"
import { AgentEvent, type SequencedEvent } from "../agent/Events.ts"
import { streamOpened } from "../telemetry/Metrics.ts"

export const keepaliveEvery = Duration.seconds(15)

// Compiled once (every streamed token goes through it). An event that does not encode is a bug at
// its emit site: it throws, and the stream ends as any failed stream does, with `error` then `response`.
const encodeEvent = Schema.encodeSync(AgentEvent)

/**
 * An event's JSON. The deltas (most of a stream: one per token) are written directly, their fields
 * in the schema's order: both fields are strings, so the union's encoder could only copy them (the
 * frame tests in test/core/events.test.ts hold these bytes against the schema's).
 */
const eventJson = (event: SequencedEvent["event"]) =>
  event.type === "assistant_text" || event.type === "thinking_content"
    ? `{"type":"${event.type}","text":${JSON.stringify(event.text)},"delta":${JSON.stringify(event.delta)}}`
    : JSON.stringify(encodeEvent(event))

/** One event's frame; its JSON is the schema's encoding, so the wire holds exactly what `AgentEvent` declares. */
export const frame = (item: SequencedEvent) => `id: ${item.seq}\ndata: ${eventJson(item.event)}\n\n`

const keepaliveFrame = ": keepalive\n\n"

/** How a stream ends that could not answer: the reason, then the (empty) `response` that always comes last. */
export const endedWithError = (message: string, sessionId: string): readonly [SequencedEvent["event"], SequencedEvent["event"]] => [
  { type: "error", message },
  { type: "response", text: "", tools_used: [], client_actions: [], session_id: sessionId }
]

/** The frames that end a stream that failed after event `last`. */
const failedFrames = (last: number, sessionId: string | undefined) =>
  endedWithError("The event stream failed", sessionId ?? "")
    .map((event, index) => frame({ seq: last + 1 + index, event }))
    .join("")

/** What a source of events (a live run, runs/Runs.ts `follow`) hands them to. */
export interface EventPush {
  readonly items: (items: ReadonlyArray<SequencedEvent>) => void
  /** The last event was handed over. */
  readonly end: () => void
}

/**
 * A response's events: a stream, or a source that pushes them to the response itself while the
 * response's scope is open (a live run's followers: no stream's queue and fiber between them).
 */
export type EventSource<E> = Stream.Stream<SequencedEvent, E> | PushedEvents

type PushedEvents = (push: EventPush) => Effect.Effect<void, never, Scope.Scope>

// A stream is an object, never a function.
const isPushed = <E>(events: EventSource<E>): events is PushedEvents => typeof events === "function"

/**
 * Frames events into text, the frames of one turn of the event loop together (one write: a write is
 * a system call, and a model sends several tokens in one packet), with the keep-alive beside them
 * on a timer. `out` takes the text; `close` ends the body after the last of it.
 */
const framer = (out: (text: string) => void, close: () => void, sessionId: string | undefined) => {
  let pending = ""
  let scheduled: ReturnType<typeof setImmediate> | undefined
  let last = 0
  let ended = false
  const flush = () => {
    scheduled = undefined
    if (pending.length === 0) return
    const text = pending
    pending = ""
    out(text)
  }
  const send = (text: string) => {
    if (ended) return
    pending += text
    scheduled ??= setImmediate(flush)
  }
  const keepalive = setInterval(() => send(keepaliveFrame), Duration.toMillis(keepaliveEvery))
  /** Stops the timers; nothing more is sent (the body was closed from the other side). */
  const stop = () => {
    ended = true
    clearInterval(keepalive)
    clearImmediate(scheduled)
  }
  return {
    get ended() {
      return ended
    },
    stop,
    write: (items: Iterable<SequencedEvent>) => {
      for (const item of items) {
        last = item.seq
        send(frame(item))
      }
    },
    /** What is pending goes out, then the end. */
    end: () => {
      if (ended) return
      stop()
      flush()
      close()
    },
    /** `response` is always last, even when the events failed. */
    fail: () => send(failedFrames(last, sessionId))
  }
}

/**
 * An SSE response of `events`: `response` is always the last event, even when they fail. The frames
 * go into a Node stream the server pipes to the socket. A source that pushes (a live run) hands its
 * batches over itself, with no Effect stream, fiber or queue between the run and the socket (an
 * open stream held two fibers and seven channel executors more that way); a stream is read by a
 * fiber of the response's. Either lives until the body ends or the client goes.
 */
export const response = <E>(events: EventSource<E>, sessionId?: string): Effect.Effect<HttpServerResponse.HttpServerResponse> =>
  Effect.gen(function*() {
    const runtime = yield* Effect.runtime<never>()
    const scope = yield* Scope.make()
    // Counted open until the body is gone (ended and read, or its client gone): telemetry/Metrics.ts.
    const uncount = yield* streamOpened
    const body = new Readable({
      read() {},
      destroy(error, callback) {
        frames.stop()
        Runtime.runFork(runtime)(Effect.zipRight(uncount, Scope.close(scope, Exit.void)))
        callback(error)
      }
    })
    const frames = framer((text) => body.push(text), () => body.push(null), sessionId)
    // A run calls this from its own step: a frame that fails to encode (a bug at its emit site)
    // ends this response as a failed stream does, and never reaches the run.
    const items = (batch: ReadonlyArray<SequencedEvent>) => {
      if (frames.ended) return
      try {
        frames.write(batch)
      } catch (defect) {
        Runtime.runFork(runtime)(Effect.logError("Event stream failed", Cause.die(defect)))
        frames.fail()
        frames.end()
      }
    }
    const source = isPushed(events)
      ? events({ items, end: frames.end })
      : Effect.forkScoped(
        Stream.runForEachChunk(events, (chunk) => Effect.sync(() => frames.write(chunk))).pipe(
          Effect.catchAllCause((cause) => Effect.as(Effect.logError("Event stream failed", cause), frames.fail())),
          Effect.ensuring(Effect.sync(frames.end))
        )
      )
    yield* Scope.extend(source, scope)
    return HttpServerResponse.raw(body, {
      contentType: "text/event-stream",
      headers: {
        "cache-control": "no-cache",
        "x-accel-buffering": "no",
        ...(sessionId ? { "x-session-id": sessionId } : {})
      }
    })
  })

/** A few events, numbered from 1, for answers that need no run (passive, queued, unheard voice). */
export const fixed = (...events: ReadonlyArray<SequencedEvent["event"]>) =>
  Stream.fromIterable(events.map((event, index): SequencedEvent => ({ seq: index + 1, event })))
