/**
 * The chunks of an opened OpenAI-compatible stream, handed over a batch at a time (`batchesOf`).
 */
import { Effect } from "effect"
import type { LlmError } from "./Model.ts"
import type { ChunkStream, WireError } from "./OpenAiClient.ts"

/**
 * The chunks of an opened provider stream as batches: the stream hands over each read's payloads,
 * they wait in a buffer, and `next` takes everything buffered (the chunks that arrived together: a
 * packet holds several tokens), waiting when there is none. So a token costs the run one loop step,
 * not a pass through stream stages. The idle timeout is one timer re-armed on every read (a
 * provider's keep-alive comment counts): when it fires, the response is ended and the read fails as
 * a timeout.
 */
export const batchesOf = <Chunk>(
  events: ChunkStream,
  idleTimeoutMs: number,
  failure: (error: WireError, timedOut: boolean) => LlmError
) => {
  let buffer: Array<Chunk> = []
  let ended = false
  let failed: LlmError | undefined
  let closed = false
  let timedOut = false
  let timer: ReturnType<typeof setTimeout> | undefined
  let waiting: ((effect: Effect.Effect<ReadonlyArray<Chunk> | null, LlmError>) => void) | undefined
  const take = (): Effect.Effect<ReadonlyArray<Chunk> | null, LlmError> => {
    if (buffer.length > 0) {
      const batch = buffer
      buffer = []
      return Effect.succeed(batch)
    }
    if (failed) return Effect.fail(failed)
    return Effect.succeed(null)
  }
  const wake = () => {
    const resume = waiting
    waiting = undefined
    resume?.(take())
  }
  const arm = () => {
    clearTimeout(timer)
    timer = setTimeout(() => {
      timedOut = true
      events.abort()
    }, idleTimeoutMs)
  }
  arm()
  events.read({
    chunks: (batch) => {
      if (closed || timedOut) return
      arm()
      if (batch.length === 0) return
      for (const chunk of batch) buffer.push(chunk as Chunk)
      wake()
    },
    end: () => {
      clearTimeout(timer)
      if (closed) return
      ended = true
      wake()
    },
    fail: (error) => {
      clearTimeout(timer)
      if (closed) return
      failed = failure(error, timedOut)
      wake()
    }
  })
  return {
    /** The chunks buffered since the last call (waiting for one); null once the stream ended. */
    next: Effect.async<ReadonlyArray<Chunk> | null, LlmError>((resume) => {
      if (buffer.length > 0 || ended || failed) return resume(take())
      waiting = resume
      return Effect.sync(() => {
        waiting = undefined
      })
    }),
    close: () => {
      closed = true
      clearTimeout(timer)
    }
  }
}
