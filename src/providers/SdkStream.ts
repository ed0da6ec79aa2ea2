/**
 * A streamed call through a vendor SDK that hands out its events as an async iterable (Anthropic's,
 * Gemini's): each event folded into Cairn's deltas and handed on as it comes, an idle timer between
 * events, and the request ended when the call ends early (interruption, idle timeout, failure).
 */
import { Duration, Effect } from "effect"
import type { LlmError, LlmStreamEvent } from "./Model.ts"

export interface SdkStreamOptions<Event, E> {
  /** Opens the stream; aborting `signal` ends the request. */
  readonly open: (signal: AbortSignal) => PromiseLike<AsyncIterable<Event>>
  /** The longest wait for the next event. */
  readonly idleTimeoutMs: number
  readonly idle: () => LlmError
  readonly toError: (error: unknown) => LlmError
  /** Folds one event into the call's state, pushing the deltas it makes. */
  readonly handle: (event: Event, out: Array<LlmStreamEvent>) => void
  readonly onEvents: (events: ReadonlyArray<LlmStreamEvent>) => Effect.Effect<void, E>
}

export const streamEvents = <Event, E>(options: SdkStreamOptions<Event, E>): Effect.Effect<void, LlmError | E> =>
  Effect.acquireUseRelease(
    Effect.sync(() => new AbortController()),
    (controller) =>
      Effect.gen(function*() {
        const idle = Duration.millis(options.idleTimeoutMs)
        const iterable = yield* Effect.tryPromise({ try: () => options.open(controller.signal), catch: options.toError })
        const iterator = iterable[Symbol.asyncIterator]()
        for (;;) {
          const next = yield* Effect.tryPromise({ try: () => iterator.next(), catch: options.toError }).pipe(
            Effect.timeoutFail({ duration: idle, onTimeout: options.idle })
          )
          if (next.done) return
          const out: Array<LlmStreamEvent> = []
          options.handle(next.value, out)
          if (out.length > 0) yield* options.onEvents(out)
        }
      }),
    (controller) => Effect.sync(() => controller.abort())
  )
