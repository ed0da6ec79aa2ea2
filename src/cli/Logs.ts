/**
 * `cairn logs`: the server's log lines as it writes them (`GET /api/v1/admin/logs/stream`), masked
 * as the server masks them, followed until Ctrl+C or the server's shutdown. `--since` first replays
 * the lines the server still keeps (its last 500) from that time; `--level` and `--query` filter on
 * the server, so a quiet filter costs the connection nothing.
 */
import { Command, Options } from "@effect/cli"
import { Console, Effect, Option, Stream } from "effect"
import { LineLevel, type LogTailEvent } from "../logs/Model.ts"
import { connect, connectionOptions } from "./Connection.ts"
import { fail, jsonOption, style } from "./Output.ts"

const unitMs = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const

/** `--since` as a time: an age (`30s`, `10m`, `2h`, `1d`) before now, or a date the server reads. */
export const sinceOf = (text: string, now: number): Date | undefined => {
  const age = /^(\d{1,6})([smhd])$/.exec(text.trim())
  if (age) return new Date(now - Number(age[1]) * unitMs[age[2] as keyof typeof unitMs])
  const date = new Date(text)
  return Number.isNaN(date.getTime()) ? undefined : date
}

const levelStyle: Record<typeof LineLevel.Type, (text: string) => string> = {
  trace: style.dim,
  debug: style.dim,
  info: style.cyan,
  warning: style.yellow,
  error: style.red,
  fatal: style.red
}

/** One line as a person reads it: time (UTC), level, message, annotations as key=value, the cause beneath. */
export const lineText = (event: Extract<LogTailEvent, { type: "line" }>) => {
  const annotations = Object.entries(event.annotations).map(([key, value]) =>
    `${key}=${typeof value === "string" ? value : JSON.stringify(value)}`
  )
  const head = [
    style.dim(event.timestamp.slice(11, 23)),
    levelStyle[event.level](event.level.toUpperCase().padEnd(7)),
    event.message,
    ...annotations.map(style.dim)
  ].join(" ")
  return event.cause ? `${head}\n${style.dim(event.cause.replace(/^/gm, "  "))}` : head
}

const skippedText = (event: Extract<LogTailEvent, { type: "skipped" }>) =>
  `… ${event.count} line${event.count === 1 ? "" : "s"} skipped (${
    event.reason === "slow_reader" ? "this reader fell behind" : "older than the lines the server keeps"
  })`

export const logsCommand = Command.make(
  "logs",
  {
    ...connectionOptions,
    level: Options.choice("level", LineLevel.literals).pipe(
      Options.withDescription("The least severe level shown (default: every line the server writes)"),
      Options.optional
    ),
    query: Options.text("query").pipe(
      Options.withAlias("q"),
      Options.withDescription("Only lines whose message, annotations or cause contain this text (case-insensitive)"),
      Options.optional
    ),
    since: Options.text("since").pipe(
      Options.withDescription("First the kept lines written since then: an age (30s, 10m, 2h, 1d) or a date"),
      Options.optional
    ),
    json: jsonOption
  },
  (flags) =>
    Effect.gen(function*() {
      const since = Option.isSome(flags.since) ? sinceOf(flags.since.value, Date.now()) : undefined
      if (Option.isSome(flags.since) && since === undefined) {
        return yield* fail(`--since takes an age (30s, 10m, 2h, 1d) or a date, not ${JSON.stringify(flags.since.value)}`)
      }
      const { streams } = yield* connect(flags)
      yield* streams.logs({
        ...(Option.isSome(flags.level) ? { level: flags.level.value } : {}),
        ...(Option.isSome(flags.query) ? { q: flags.query.value } : {}),
        ...(since ? { since } : {})
      }).pipe(
        Stream.runForEach((event) =>
          flags.json
            ? Console.log(JSON.stringify(event))
            : event.type === "line"
            ? Console.log(lineText(event))
            : Console.error(style.dim(skippedText(event)))
        )
      )
      // The server ends the stream when it shuts down.
      if (!flags.json) yield* Console.error(style.dim("The server closed the log stream (it is stopping)."))
    })
).pipe(
  Command.withDescription(
    "Follow the server's log lines as it writes them (masked), until Ctrl+C; --since replays the kept ones first (needs logs:read)"
  )
)
