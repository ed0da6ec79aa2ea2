/**
 * A real pseudo-terminal for CLI tests: tmux runs the command in a detached session of its own
 * server (one socket per test process), keys are sent as a person types them, and the screen is
 * read back with its scrollback. tmux is a Debian package `.ci/run` installs.
 */
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { root } from "./imports.ts"
import { processStartMs, scaled } from "./time.ts"

const socket = `cairn-test-${process.pid}`
let sessions = 0

/**
 * The server's options, read when it starts, so every pane has them from its first moment: set
 * after `new-session`, a command that exits at once (`cairn --help`) took its session, and with it
 * the server, before `remain-on-exit` could keep it; and a history limit applies only to new panes.
 */
const config = path.join(os.tmpdir(), `cairn-test-tmux-${process.pid}.conf`)
fs.writeFileSync(config, "set-option -g remain-on-exit on\nset-option -g history-limit 5000\n")
process.once("exit", () => fs.rmSync(config, { force: true }))

const tmux = (...args: Array<string>) => execFileSync("tmux", ["-L", socket, "-f", config, ...args], { encoding: "utf8" })

/** The `cairn` command as a user runs it, from the repository's bin/. */
export const cairnBin = path.join(root, "bin", "cairn.mjs")

const quote = (word: string) => `'${word.replace(/'/g, `'\\''`)}'`

export interface Pty {
  /** What the terminal shows, scrollback included, lines joined where the terminal wrapped them. */
  readonly screen: () => string
  /** Waits until the screen matches; fails with the screen when it does not in time (`timeoutMs` scaled by TEST_TIME_SCALE). */
  readonly waitFor: (pattern: RegExp | string, timeoutMs?: number) => Promise<string>
  /** Waits for the command's first screen (its prompt, say): a process start, with a start's deadline. */
  readonly started: (pattern: RegExp | string) => Promise<string>
  /** Types a line and presses Enter. */
  readonly typeLine: (text: string) => void
  /** Presses keys by tmux's names: `C-c`, `C-d`, `Enter`. */
  readonly press: (...keys: Array<string>) => void
  /** The command's exit status once it has exited (a signal shows as 128 + its number). */
  readonly exitStatus: () => number | undefined
  /** Waits for the command to exit: its exit status, or undefined if it did not exit in time (scaled). */
  readonly waitForExit: (timeoutMs?: number) => Promise<number | undefined>
  readonly close: () => void
}

export const startPty = (args: ReadonlyArray<string>, env: Record<string, string> = {}, size = { columns: 100, rows: 40 }): Pty => {
  const name = `cli-${++sessions}`
  const environment = Object.entries({ NO_COLOR: "1", ...env }).map(([key, value]) => `${key}=${quote(value)}`)
  // The shell prints the exit status when the command ends: tmux's own pane status can lag behind
  // the pane's end (seen empty for seconds on a loaded machine).
  const command = `env ${environment.join(" ")} node ${quote(cairnBin)} ${args.map(quote).join(" ")}; printf '\\n[exited %s]\\n' "$?"`
  // The pane stays after the command exits (remain-on-exit, in the config), so its last screen and exit status can be read.
  tmux("new-session", "-d", "-s", name, "-x", String(size.columns), "-y", String(size.rows), command)
  const screen = () => tmux("capture-pane", "-p", "-J", "-S", "-", "-t", name)
  /** Waits until the screen matches, for at most `limitMs` (already scaled). */
  const showing = async (pattern: RegExp | string, limitMs: number) => {
    const matches = (text: string) => (typeof pattern === "string" ? text.includes(pattern) : pattern.test(text))
    const deadline = Date.now() + limitMs
    while (Date.now() < deadline) {
      const text = screen()
      if (matches(text)) return text
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
    throw new Error(`The terminal never showed ${String(pattern)}; it shows:\n${screen()}`)
  }
  const pty: Pty = {
    screen,
    waitFor: (pattern, timeoutMs = 15_000) => showing(pattern, scaled(timeoutMs)),
    started: (pattern) => showing(pattern, processStartMs),
    typeLine: (text) => {
      tmux("send-keys", "-t", name, "-l", text)
      tmux("send-keys", "-t", name, "Enter")
    },
    press: (...keys) => {
      tmux("send-keys", "-t", name, ...keys)
    },
    exitStatus: () => {
      // Not anchored at the end: tmux may add its own "Pane is dead" line after it.
      const status = /^\[exited (\d+)\]$/m.exec(screen())?.[1]
      return status === undefined ? undefined : Number(status)
    },
    waitForExit: async (timeoutMs = 10_000) => {
      const deadline = Date.now() + scaled(timeoutMs)
      while (Date.now() < deadline) {
        const status = pty.exitStatus()
        if (status !== undefined) return status
        await new Promise((resolve) => setTimeout(resolve, 50))
      }
      return undefined
    },
    close: () => {
      try {
        tmux("kill-session", "-t", name)
      } catch {
        // Already gone.
      }
    }
  }
  return pty
}
