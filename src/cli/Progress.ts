/**
 * A progress bar on stderr (stdout stays clean for `--json`): done of total, rate and time left.
 * On a terminal it redraws one line at most ten times a second; elsewhere it writes a line at each
 * tenth of the way, so a log still shows it moving.
 */
import { clip, columns, style } from "./Output.ts"

export interface ProgressOptions {
  readonly label: string
  readonly total: number
  /** How a count is shown: `files`, or `bytes` (shown in KB/MB). */
  readonly unit: "items" | "bytes"
  readonly noun?: string
}

const sizeOf = (bytes: number) =>
  bytes >= 1024 * 1024
    ? `${(bytes / 1024 / 1024).toFixed(1)} MB`
    : bytes >= 1024
    ? `${(bytes / 1024).toFixed(1)} KB`
    : `${Math.round(bytes)} B`

const durationOf = (seconds: number) =>
  !Number.isFinite(seconds)
    ? "?"
    : seconds >= 3600
    ? `${Math.floor(seconds / 3600)}h${Math.round((seconds % 3600) / 60)}m`
    : seconds >= 60
    ? `${Math.floor(seconds / 60)}m${Math.round(seconds % 60)}s`
    : `${Math.ceil(seconds)}s`

/**
 * The line for `done` of the options' total after `elapsedSeconds`, with what is being worked on
 * now (`current`) while it runs; pure, so it is tested directly.
 */
export const progressLine = (options: ProgressOptions, done: number, elapsedSeconds: number, width: number, current?: string) => {
  const amount = (n: number) => (options.unit === "bytes" ? sizeOf(n) : String(n))
  const rate = elapsedSeconds > 0 ? done / elapsedSeconds : 0
  const total = Math.max(options.total, 0)
  const fraction = total > 0 ? Math.min(done / total, 1) : 1
  const rateText = options.unit === "bytes" ? `${sizeOf(rate)}/s` : `${rate.toFixed(1)} ${options.noun ?? "items"}/s`
  const eta = done >= total ? `in ${durationOf(elapsedSeconds)}` : `ETA ${durationOf(rate > 0 ? (total - done) / rate : Infinity)}`
  const tail = ` ${String(Math.floor(fraction * 100)).padStart(3)}% ${amount(done)}/${amount(total)} ${rateText} ${eta}`
  const barWidth = Math.max(10, Math.min(30, width - options.label.length - tail.length - 3))
  const filled = Math.round(fraction * barWidth)
  const working = current !== undefined && done < total ? ` · ${current}` : ""
  return clip(`${options.label} [${"#".repeat(filled)}${".".repeat(barWidth - filled)}]${tail}${working}`, width)
}

/** How often a terminal's bar is redrawn while nothing finishes, so its time keeps moving. */
const tickMs = 1000

export const makeProgress = (options: ProgressOptions) => {
  const started = performance.now()
  const tty = process.stderr.isTTY === true
  let done = 0
  let drawn = 0
  let lastTenth = -1
  let current: string | undefined
  const draw = (final: boolean) => {
    const now = performance.now()
    const line = progressLine(options, done, (now - started) / 1000, tty ? columns() - 1 : 100, final ? undefined : current)
    if (tty) {
      if (!final && now - drawn < 100) return
      drawn = now
      process.stderr.write(`\r\u001b[2K${final ? style.green(line) : line}${final ? "\n" : ""}`)
      return
    }
    const tenth = options.total > 0 ? Math.floor((done / options.total) * 10) : 10
    if (tenth > lastTenth || (final && lastTenth < 10)) {
      lastTenth = tenth
      process.stderr.write(`${line}\n`)
    }
  }
  draw(false)
  const ticker = tty ? setInterval(() => draw(false), tickMs).unref() : undefined
  return {
    advance: (by = 1) => {
      done += by
      draw(false)
    },
    /** What is being worked on now, shown after the counts on a terminal. */
    working: (what: string) => {
      current = what
      draw(false)
    },
    finish: () => {
      clearInterval(ticker)
      draw(true)
    }
  }
}
