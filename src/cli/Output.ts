/**
 * How the client commands write: colour only on a terminal (and never with `NO_COLOR`), tables cut
 * to the terminal's width (80 columns when it is not one), `--json` for machines, and one line per
 * failure on stderr.
 */
import { Options } from "@effect/cli"
import { HttpClientError } from "@effect/platform"
import { ConfigError, Console, Data, Effect, ParseResult } from "effect"

/** The exit codes, as docs/cli.md lists them. */
export const ExitCode = { ok: 0, failure: 1, usage: 2 } as const

const colourOn = () => process.stdout.isTTY === true && !("NO_COLOR" in process.env && process.env.NO_COLOR !== "")

const sgr = (open: number, close: number) => (text: string) => (colourOn() ? `\u001b[${open}m${text}\u001b[${close}m` : text)

export const style = {
  bold: sgr(1, 22),
  dim: sgr(2, 22),
  red: sgr(31, 39),
  green: sgr(32, 39),
  yellow: sgr(33, 39),
  cyan: sgr(36, 39)
}

export const columns = () => (process.stdout.isTTY && process.stdout.columns ? process.stdout.columns : 80)

/** Cut to `width` characters, marking the cut. */
export const clip = (
  text: string,
  width: number
) => (text.length <= width ? text : width <= 1 ? text.slice(0, width) : `${text.slice(0, width - 1)}…`)

/** One line of a value for a terminal: JSON without newlines, cut. */
export const inline = (value: unknown, width: number) =>
  clip((typeof value === "string" ? value : JSON.stringify(value) ?? "").replace(/\s+/g, " "), width)

/**
 * Rows under a header, each column as wide as its widest cell. When that passes the terminal's
 * width the widest columns give way first, down to 8 characters, then whole columns are left out
 * from the right (the least useful: tables put what matters first). The first column never gives
 * way: it names the row (an id to copy into the next command).
 */
export const table = (header: ReadonlyArray<string>, rows: ReadonlyArray<ReadonlyArray<string>>) => {
  const widths = header.map((title, i) => Math.max(title.length, ...rows.map((row) => (row[i] ?? "").length)))
  const width = () => widths.reduce((a, b) => a + b, 0) + 2 * (widths.length - 1)
  while (width() > columns()) {
    const cuttable = widths.slice(1)
    const widest = 1 + cuttable.indexOf(Math.max(...cuttable))
    if (cuttable.length === 0) break
    if (widths[widest]! > 8) widths[widest]!--
    else widths.pop()
  }
  const line = (cells: ReadonlyArray<string>) =>
    widths.map((w, i) => (i === widths.length - 1 ? clip(cells[i] ?? "", w) : clip(cells[i] ?? "", w).padEnd(w))).join("  ")
  return [style.bold(line(header)), ...rows.map(line)].join("\n")
}

export const jsonOption = Options.boolean("json").pipe(Options.withDescription("Print JSON for machines instead of a table"))

export const printJson = (value: unknown) => Console.log(JSON.stringify(value, null, 2))

/** A failure the CLI itself reports (a bad file, a refused answer), with its message as said. */
export class CliFailure extends Data.TaggedError("CliFailure")<{ readonly message: string }> {}

export const fail = (message: string) => Effect.fail(new CliFailure({ message }))

/** What went wrong, in one line: the API's `{detail}`, an unreachable server, or the error's message. */
export const describeFailure = (error: unknown): string => {
  if (HttpClientError.isHttpClientError(error)) {
    if (error._tag === "RequestError") {
      return `cannot reach ${error.request.url} (${error.reason}: ${
        (error.cause as Error | undefined)?.message ?? error.description ?? "no answer"
      })`
    }
    return `unexpected answer ${error.response.status} from ${error.request.url}`
  }
  // A setting of a server command: its text names the setting.
  if (ConfigError.isConfigError(error)) return String(error)
  if (ParseResult.isParseError(error)) {
    return ParseResult.ArrayFormatter.formatErrorSync(error)
      .map((issue) => (issue.path.length > 0 ? `${issue.path.join(".")}: ${issue.message}` : issue.message))
      .join("; ")
  }
  const tagged = error as { _tag?: string; detail?: unknown; message?: unknown }
  if (tagged && typeof tagged === "object") {
    if (tagged.detail !== undefined) {
      const detail = typeof tagged.detail === "string" ? tagged.detail : JSON.stringify(tagged.detail)
      return tagged._tag ? `${tagged._tag}: ${detail}` : detail
    }
    if (typeof tagged.message === "string" && tagged.message.length > 0) return tagged.message
    if (tagged._tag) return tagged._tag
  }
  return String(error)
}
