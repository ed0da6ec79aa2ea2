/**
 * The live tail of this process's log (`GET /api/v1/admin/logs/stream`): the logger of
 * `Logging.ts` hands every line it writes (at the running level) to `push`, which keeps the last
 * `ringSize` lines for a reconnecting reader's replay and gives each line to every open follower.
 *
 * Only this process's lines: the bus between processes carries notices, not payloads (db/Bus.ts),
 * and log lines are not stored in the database, so a reader sees the lines of the process that
 * answers it. Ids carry the process's start (`<boot>-<seq>`): after a restart, or from another
 * process, an id is not one of this process's and the whole ring is replayed.
 *
 * A line is rendered as the JSON log line renders it (`Redacted` values as `<redacted>`, URLs
 * already masked where they were logged) and cut to a bounded size when it is kept. The reader's
 * side (logs/TailStream.ts) masks it once more before anyone sees it.
 */
import { Cause, Context, FiberId, FiberRef, FiberRefs, HashMap, Inspectable, List, type Logger, type LogLevel } from "effect"
import { ParentSpan } from "effect/Tracer"

export type TailLevel = "trace" | "debug" | "info" | "warning" | "error" | "fatal"

/** Most verbose first: a minimum level lets through its own index and those after it. */
export const tailLevels: ReadonlyArray<TailLevel> = ["trace", "debug", "info", "warning", "error", "fatal"]

/** One line as a reader sees it (logs/Model.ts `LogTailLine` is its schema). */
export interface TailLine {
  readonly id: string
  readonly timestamp: string
  readonly level: TailLevel
  readonly message: string
  readonly annotations: Record<string, unknown>
  /** Effect log spans open around the line: label to milliseconds so far. */
  readonly spans: Record<string, number>
  readonly fiber: string
  /** The trace span the line was written in, when there is one. */
  readonly trace: { readonly span: string; readonly trace_id: string; readonly span_id: string } | null
  readonly cause: string | null
}

export interface TailEntry {
  readonly seq: number
  readonly rank: number
  readonly timestamp: string
  /** The line as written (cut, not yet masked: never send it as it is). */
  readonly raw: TailLine
}

/** How many recent lines are kept for a replay. */
export const ringSize = 500
const messageChars = 4_000
const valueChars = 2_000
const causeChars = 8_000

const levelOf: Record<string, TailLevel | undefined> = {
  Trace: "trace",
  Debug: "debug",
  Info: "info",
  Warning: "warning",
  Error: "error",
  Fatal: "fatal"
}

const cut = (text: string, max: number) => (text.length > max ? `${text.slice(0, max)}… [${text.length} characters]` : text)

const textOf = (value: unknown): string => {
  const json = typeof value === "string" ? value : Inspectable.stringifyCircular(structured(value))
  return json ?? String(value)
}

/** As Effect's JSON logger renders a message or an annotation (`Redacted` as `<redacted>`). */
const structured = (value: unknown): unknown =>
  typeof value === "bigint" || typeof value === "function" || typeof value === "symbol" ? String(value) : Inspectable.toJSON(value)

/** A value kept as it is when small, else as its cut text. */
const bounded = (value: unknown): unknown => {
  const shown = structured(value)
  if (typeof shown === "string") return cut(shown, valueChars)
  // JSON has no undefined (an annotation set to it): kept as null.
  const json: string | undefined = Inspectable.stringifyCircular(shown)
  if (json === undefined) return null
  return json.length > valueChars ? cut(json, valueChars) : JSON.parse(json)
}

const rawLine = (options: Logger.Logger.Options<unknown>, level: TailLevel, id: string): TailLine => {
  const now = options.date.getTime()
  const annotations: Record<string, unknown> = {}
  for (const [key, value] of HashMap.toEntries(options.annotations)) annotations[key] = bounded(value)
  const spans: Record<string, number> = {}
  for (const span of List.toArray(options.spans)) spans[span.label] = now - span.startTime
  const messages = Array.isArray(options.message) ? options.message : [options.message]
  const parent = Context.getOption(FiberRefs.getOrDefault(options.context, FiberRef.currentContext), ParentSpan)
  const span = parent._tag === "Some" && parent.value._tag === "Span" ? parent.value : undefined
  return {
    id,
    timestamp: options.date.toISOString(),
    level,
    message: cut(messages.map(textOf).join(" "), messageChars),
    annotations,
    spans,
    fiber: FiberId.threadName(options.fiberId),
    trace: span ? { span: span.name, trace_id: span.traceId, span_id: span.spanId } : null,
    cause: Cause.isEmpty(options.cause) ? null : cut(Cause.pretty(options.cause, { renderErrorCause: true }), causeChars)
  }
}

/** What a reader asked to see again: lines after an id, or written since a time. */
export interface Replay {
  readonly after?: string | undefined
  readonly since?: Date | undefined
}

export interface LogTailShape {
  /** Hands `follower` every line written from now on; the answer stops that. */
  readonly follow: (follower: (entry: TailEntry) => void) => () => void
  /** The kept lines a replay asks for, and how many lines before them it can no longer give. */
  readonly replay: (asked: Replay) => { readonly entries: ReadonlyArray<TailEntry>; readonly missed: number }
}

export class LogTail extends Context.Tag("cairn/LogTail")<LogTail, LogTailShape>() {}

/** A tail and the function its logger writes to. */
export const makeTail = () => {
  const boot = Math.floor(Math.random() * 36 ** 6).toString(36).padStart(6, "0")
  const ring: Array<TailEntry | undefined> = new Array(ringSize)
  const followers = new Set<(entry: TailEntry) => void>()
  let seq = 0
  const push = (options: Logger.Logger.Options<unknown>) => {
    const level = levelOf[(options.logLevel as LogLevel.LogLevel)._tag]
    if (level === undefined) return
    let raw: TailLine
    try {
      raw = rawLine(options, level, `${boot}-${seq + 1}`)
    } catch {
      // Whatever a line holds, rendering it for the tail must never fail the code that logged it.
      return
    }
    seq += 1
    const entry: TailEntry = { seq, rank: tailLevels.indexOf(level), timestamp: raw.timestamp, raw }
    ring[seq % ringSize] = entry
    for (const follower of followers) {
      try {
        follower(entry)
      } catch {
        // A follower only queues the line; a failure there must never reach the code that logged.
      }
    }
  }
  const kept = (): Array<TailEntry> => {
    const out: Array<TailEntry> = []
    for (let at = Math.max(1, seq - ringSize + 1); at <= seq; at++) out.push(ring[at % ringSize]!)
    return out
  }
  const tail: LogTailShape = {
    follow: (follower) => {
      followers.add(follower)
      return () => followers.delete(follower)
    },
    replay: ({ after, since }) => {
      const all = kept()
      const [from, number] = after?.split("-") ?? []
      const last = from === boot ? Number(number) : NaN
      if (Number.isInteger(last) && last >= 0) {
        const oldest = all[0]?.seq ?? seq + 1
        return { entries: all.filter((entry) => entry.seq > last), missed: Math.max(0, oldest - last - 1) }
      }
      if (after !== undefined) return { entries: all, missed: 0 }
      if (since !== undefined) {
        const at = since.toISOString()
        return { entries: all.filter((entry) => entry.timestamp >= at), missed: 0 }
      }
      return { entries: [], missed: 0 }
    }
  }
  return { tail, push }
}
