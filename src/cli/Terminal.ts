/**
 * The chat's terminal: one readline interface for the prompt and for the questions a run asks
 * (an approval, a command to run), and Ctrl+C handed to the chat instead of killing the process.
 * Lines are queued as they come, so piped input (`cairn chat < questions.txt`) is read in order
 * even while a run streams.
 */
import { Effect, Option } from "effect"
import * as readline from "node:readline"

export interface Terminal {
  /** A line the user typed; None when input ended (Ctrl+D, or the end of piped input). */
  readonly ask: (prompt: string, prefill?: string) => Effect.Effect<Option.Option<string>>
  /**
   * A yes/no question before something runs (an approval, a shell command): lines typed ahead do
   * not answer it, and without a terminal there is no one to ask, so it is no.
   */
  readonly confirm: (prompt: string) => Effect.Effect<boolean>
  readonly write: (text: string) => void
  /** Ctrl+C: the chat decides what it means (stop the run, or quit). */
  readonly onInterrupt: (handler: () => void) => void
}

export const makeTerminal = Effect.acquireRelease(
  Effect.sync(() => {
    const input = process.stdin
    const interactive = input.isTTY === true
    const rl = readline.createInterface({ input, output: process.stdout, terminal: interactive, historySize: 200 })
    const lines: Array<string> = []
    let ended = false
    let waiting: ((line: Option.Option<string>) => void) | undefined
    rl.on("line", (line) => {
      if (waiting) {
        if (!interactive) process.stdout.write(`${line}\n`)
        const resume = waiting
        waiting = undefined
        resume(Option.some(line))
      } else lines.push(line)
    })
    rl.on("close", () => {
      ended = true
      waiting?.(Option.none())
      waiting = undefined
    })
    const terminal: Terminal = {
      ask: (prompt, prefill) =>
        Effect.async<Option.Option<string>>((resume) => {
          const queued = lines.shift()
          if (queued !== undefined) {
            // A piped line is echoed after its prompt, so a transcript reads as a conversation.
            process.stdout.write(interactive ? "" : `${prompt}${queued}\n`)
            return resume(Effect.succeed(Option.some(queued)))
          }
          if (ended) return resume(Effect.succeed(Option.none()))
          waiting = (line) => resume(Effect.succeed(line))
          if (interactive) {
            rl.setPrompt(prompt)
            rl.prompt()
            if (prefill) rl.write(prefill)
          } else process.stdout.write(prompt)
          return Effect.sync(() => {
            waiting = undefined
          })
        }),
      confirm: (prompt) =>
        Effect.suspend(() => {
          if (!interactive) {
            process.stdout.write(`${prompt}no (no terminal to ask; --yes runs commands without asking)\n`)
            return Effect.succeed(false)
          }
          lines.length = 0
          return Effect.map(terminal.ask(prompt), Option.exists((answer) => /^\s*y(es)?\s*$/i.test(answer)))
        }),
      write: (text) => {
        process.stdout.write(text)
      },
      onInterrupt: (handler) => {
        rl.on("SIGINT", handler)
        // Without a terminal readline sees no Ctrl+C; the signal itself arrives instead.
        if (!interactive) process.on("SIGINT", handler)
      }
    }
    return { rl, terminal }
  }),
  ({ rl }) => Effect.sync(() => rl.close())
).pipe(Effect.map(({ terminal }) => terminal))
