/**
 * The live tail's response: Server-Sent Events of this process's log lines (telemetry/LogTail.ts),
 * the replay a reader asked for first, then each line as it is written, filtered by level and text.
 *
 * Bounded: a reader's lines wait in a queue of at most `queued` lines while the socket cannot take
 * more (the Node stream's `push` answers false until its `read` asks again); beyond that they are
 * counted, not kept, and a `skipped` event says how many were lost where they were lost. A
 * `: keepalive` comment goes out every 15 s; at shutdown the stream sends what is queued and ends.
 *
 * Masking: a kept line is rendered as the JSON log line (`Redacted` as `<redacted>`, URLs masked
 * where they were logged); since the tail is read over HTTP it is masked once more, as the tool-call
 * audit masks arguments (secrets/Patterns.ts: credential-named annotations `****`, secret-like
 * values redacted), once per line on its first read (nothing is spent while nobody follows). The
 * text filter matches the masked form, so it cannot probe for a secret.
 */
import { HttpServerResponse } from "@effect/platform"
import { Deferred, Duration, Effect, Exit, Runtime, Schema, Scope } from "effect"
import { Readable } from "node:stream"
import { ShutdownSignal } from "../lifecycle/Shutdown.ts"
import { maskArguments, redactSecrets } from "../secrets/Patterns.ts"
import { LogTail, type TailEntry, tailLevels, type TailLine } from "../telemetry/LogTail.ts"
import { streamOpened } from "../telemetry/Metrics.ts"
import { type LineLevel, LogTailEvent } from "./Model.ts"

/** The most lines one reader may have waiting: a slower reader loses lines, never the server's memory. */
export const queued = 500

export interface TailFilter {
  readonly level?: typeof LineLevel.Type | undefined
  readonly q?: string | undefined
  readonly after?: string | undefined
  readonly since?: Date | undefined
}

const encodeEvent = Schema.encodeSync(LogTailEvent)

/** As the chat streams' (runs/Sse.ts): under the idle timeouts of proxies. */
const keepaliveEvery = Duration.seconds(15)

const masks = new WeakMap<TailEntry, { readonly line: TailLine; readonly text: string }>()

/** A kept line as a reader may see it, and its text in lower case for `q`: made once a line. */
export const shown = (entry: TailEntry) => {
  let made = masks.get(entry)
  if (made === undefined) {
    const { raw } = entry
    const line: TailLine = {
      ...raw,
      message: redactSecrets(raw.message),
      annotations: maskArguments(raw.annotations) as Record<string, unknown>,
      cause: raw.cause === null ? null : redactSecrets(raw.cause)
    }
    made = { line, text: `${line.message}\n${JSON.stringify(line.annotations)}\n${line.cause ?? ""}`.toLowerCase() }
    masks.set(entry, made)
  }
  return made
}

type Waiting = { readonly entry: TailEntry } | { skipped: number; readonly reason: "slow_reader" | "replay" }

const frameOf = (item: Waiting) =>
  "entry" in item
    ? `id: ${item.entry.raw.id}\ndata: ${JSON.stringify(encodeEvent({ type: "line", ...shown(item.entry).line }))}\n\n`
    : `data: ${JSON.stringify(encodeEvent({ type: "skipped", count: item.skipped, reason: item.reason }))}\n\n`

/** The queue between the tail and one reader's socket: bounded, in order, a skip where lines were lost. */
export const readerQueue = (write: (text: string) => boolean, finish: () => void) => {
  const waiting: Array<Waiting> = []
  let lines = 0
  let writable = true
  let ended = false
  let scheduled: ReturnType<typeof setImmediate> | undefined
  const flush = () => {
    scheduled = undefined
    while (writable && waiting.length > 0 && !ended) {
      let text = ""
      // A batch at a time: one write is one system call.
      for (let n = 0; n < 64 && waiting.length > 0; n++) {
        const item = waiting.shift()!
        if ("entry" in item) lines--
        text += frameOf(item)
      }
      writable = write(text)
    }
  }
  const schedule = () => {
    if (!ended) scheduled ??= setImmediate(flush)
  }
  return {
    add: (item: Waiting) => {
      if (ended) return
      if ("entry" in item && lines >= queued) {
        const last = waiting[waiting.length - 1]
        if (last && !("entry" in last) && last.reason === "slow_reader") last.skipped++
        else waiting.push({ skipped: 1, reason: "slow_reader" })
      } else {
        if ("entry" in item) lines++
        waiting.push(item)
      }
      schedule()
    },
    /** The socket asks for more. */
    resume: () => {
      writable = true
      schedule()
    },
    comment: (text: string) => {
      if (!ended && writable && waiting.length === 0) writable = write(text)
    },
    /** What waits goes out (bounded), then the end. */
    end: () => {
      if (ended) return
      writable = true
      flush()
      ended = true
      clearImmediate(scheduled)
      finish()
    },
    stop: () => {
      ended = true
      clearImmediate(scheduled)
    }
  }
}

export const tailResponse = (filter: TailFilter) =>
  Effect.gen(function*() {
    const tail = yield* LogTail
    const shutdown = yield* ShutdownSignal
    const runtime = yield* Effect.runtime<never>()
    const scope = yield* Scope.make()
    const uncount = yield* streamOpened
    const least = tailLevels.indexOf(filter.level ?? "trace")
    const needle = filter.q?.toLowerCase()
    const shows = (entry: TailEntry) => entry.rank >= least && (!needle || shown(entry).text.includes(needle))
    let unfollow = () => {}
    const body = new Readable({
      read() {
        queue.resume()
      },
      destroy(error, callback) {
        unfollow()
        clearInterval(keepalive)
        queue.stop()
        Runtime.runFork(runtime)(Effect.zipRight(uncount, Scope.close(scope, Exit.void)))
        callback(error)
      }
    })
    const queue = readerQueue((text) => body.push(text), () => body.push(null))
    // At once, so the headers leave now (Node sends them with the first bytes of the body). No
    // `retry:` field: Effect's SSE reader (the typed client's) ends the stream on one.
    queue.comment(": log tail\n\n")
    // The replay, then the live lines: no line can come between the two (both run in this turn).
    const replay = tail.replay({ after: filter.after, since: filter.since })
    if (replay.missed > 0) queue.add({ skipped: replay.missed, reason: "replay" })
    for (const entry of replay.entries) if (shows(entry)) queue.add({ entry })
    unfollow = tail.follow((entry) => {
      if (shows(entry)) queue.add({ entry })
    })
    const keepalive = setInterval(() => queue.comment(": keepalive\n\n"), Duration.toMillis(keepaliveEvery))
    yield* Scope.extend(
      Effect.forkScoped(Effect.zipRight(
        Deferred.await(shutdown),
        Effect.sync(() => {
          unfollow()
          clearInterval(keepalive)
          queue.end()
        })
      )),
      scope
    )
    return HttpServerResponse.raw(body, {
      contentType: "text/event-stream",
      headers: { "cache-control": "no-cache", "x-accel-buffering": "no" }
    })
  })
