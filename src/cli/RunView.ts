/**
 * One run as the chat shows it, event by event: the answer as it streams, thinking dimmed, each tool
 * call with its arguments, duration and error, quiet notices, and the run's questions to the user:
 * an approval (y/n) and a client tool to run (`shell_exec`, confirmed unless `--yes`).
 */
import { Command as PlatformCommand, HttpClientError } from "@effect/platform"
import { Chunk, Duration, Effect, Schedule, Stream } from "effect"
import type { AgentEvent, SequencedEvent } from "../agent/Events.ts"
import type { CairnClient } from "../client.ts"
import { makeMarkdownLines } from "./Markdown.ts"
import { clip, columns, describeFailure, inline, style } from "./Output.ts"
import type { Terminal } from "./Terminal.ts"

export interface RunViewOptions {
  readonly terminal: Terminal
  readonly client: CairnClient
  readonly bot: string
  /** Run `shell_exec` commands without asking. */
  readonly yes: boolean
  /** Refuse `shell_exec` altogether. */
  readonly noShell: boolean
  /** Told of a way to stop the local command while one runs (Ctrl+C), and of its end (undefined). */
  readonly onLocalCommand: (stop: (() => void) | undefined) => void
}

type ResponseEvent = Extract<AgentEvent, { type: "response" }>

/** The most a command's output sends back to the model. */
const maxToolOutput = 16_000

/**
 * The longest a command may run: under the server's wait for a client tool's result
 * (CLIENT_TOOL_TIMEOUT_SECONDS, 120 by default), which also covers the user's answer.
 */
export const maxShellSeconds = 110

/** An answer to the server (a tool result, a decision) is sent again after a network failure. */
const answerRetry = Schedule.exponential("200 millis").pipe(Schedule.intersect(Schedule.recurs(4)))

/** What `shell_exec` answers the model: the exit status, then the output (stderr marked), cut to size. */
export const shellResult = (exitCode: number | "timeout" | "stopped", stdout: string, stderr: string) => {
  const parts = [
    exitCode === "timeout"
      ? "Stopped: the command ran past its timeout"
      : exitCode === "stopped"
      ? "Stopped by the user"
      : `Exit status ${exitCode}`
  ]
  if (stdout.length > 0) parts.push(stdout.trimEnd())
  if (stderr.length > 0) parts.push(`[stderr]\n${stderr.trimEnd()}`)
  const text = parts.join("\n")
  return text.length <= maxToolOutput ? text : `${text.slice(0, maxToolOutput)}\n[output cut at ${maxToolOutput} characters]`
}

const collect = <E>(stream: Stream.Stream<Uint8Array, E>) =>
  stream.pipe(Stream.decodeText(), Stream.runCollect, Effect.map((chunks) => Chunk.join(chunks, "")))

/** Runs a command line in the user's shell, its output collected and its time bounded. */
export const runShell = (commandLine: string, timeoutSeconds: number) =>
  Effect.scoped(
    Effect.gen(function*() {
      const process_ = yield* PlatformCommand.start(PlatformCommand.make("sh", "-c", commandLine))
      const [stdout, stderr, exitCode] = yield* Effect.all([collect(process_.stdout), collect(process_.stderr), process_.exitCode], {
        concurrency: 3
      })
      return shellResult(exitCode, stdout, stderr)
    })
  ).pipe(
    Effect.timeoutTo({
      duration: Duration.seconds(timeoutSeconds),
      onTimeout: () => shellResult("timeout", "", ""),
      onSuccess: (text) => text
    }),
    Effect.catchAll((error) => Effect.succeed(`Error: the command could not be started (${describeFailure(error)})`))
  )

export const makeRunView = (options: RunViewOptions) => {
  const { client, terminal } = options
  let lastSeq = 0
  let sawEvent = false
  let ended = false
  let response: ResponseEvent | undefined
  let queuedTask: string | undefined
  let printedText = false
  /** Where the cursor is: inside the answer's text, inside thinking, or at a line's start. */
  let mode: "line" | "text" | "thinking" = "line"
  const width = () => columns() - 4

  /** The answer is Markdown, drawn for the terminal a line at a time (Markdown.ts). */
  const markdown = makeMarkdownLines()
  const newline = () => {
    if (mode === "text") terminal.write(markdown.flush())
    if (mode !== "line") terminal.write("\n")
    mode = "line"
  }
  const note = (text: string) => {
    newline()
    terminal.write(`  ${text}\n`)
  }

  const answerToolRequest = (event: Extract<AgentEvent, { type: "tool_request" }>) =>
    Effect.gen(function*() {
      const args = (event.arguments ?? {}) as { command?: unknown; timeout?: unknown }
      let result: string
      if (event.tool !== "shell_exec") {
        result = `Error: this client (the cairn CLI) does not implement the client tool ${event.tool}`
        note(style.yellow(`the bot asked for the client tool ${event.tool}, which this client does not have`))
      } else if (typeof args.command !== "string" || args.command.length === 0) {
        result = "Error: shell_exec needs a command"
      } else if (options.noShell) {
        result = "The user does not allow shell commands from this client (--no-shell)."
        note(style.yellow(`refused to run: ${args.command} (--no-shell)`))
      } else {
        note(`${style.cyan("$")} ${args.command}`)
        const allowed = options.yes || (yield* terminal.confirm(style.bold("  Run this command on this machine? [y/N] ")))
        if (!allowed) {
          result = "The user declined to run this command."
        } else {
          const timeout = typeof args.timeout === "number" && args.timeout > 0 ? Math.min(args.timeout, maxShellSeconds) : 30
          // Ctrl+C stops the command (the chat also stops the run).
          const stopped = Effect.async<string>((resume) => {
            options.onLocalCommand(() => resume(Effect.succeed(shellResult("stopped", "", ""))))
            return Effect.sync(() => options.onLocalCommand(undefined))
          })
          result = yield* Effect.raceFirst(runShell(args.command, timeout), stopped).pipe(
            Effect.ensuring(Effect.sync(() => options.onLocalCommand(undefined)))
          )
          for (const line of result.split("\n").slice(0, 12)) terminal.write(`  ${style.dim(clip(line, width()))}\n`)
        }
      }
      yield* client.chat.toolResult({ payload: { request_id: event.request_id, result } }).pipe(
        Effect.retry({ schedule: answerRetry, while: HttpClientError.isHttpClientError })
      )
    })

  const decideApproval = (event: Extract<AgentEvent, { type: "approval_request" }>) =>
    Effect.gen(function*() {
      note(
        `${style.yellow("approval needed:")} ${event.tool_name} ${
          style.dim(inline(event.arguments, width() - event.tool_name.length - 20))
        }`
      )
      const approved = yield* terminal.confirm(style.bold("  Allow this tool call? [y/N] "))
      yield* client.chat.decide({ path: { id: event.approval_id }, payload: { approved } }).pipe(
        Effect.retry({ schedule: answerRetry, while: HttpClientError.isHttpClientError }),
        Effect.catchAll((error) => Effect.sync(() => note(style.red(`the decision was not taken: ${describeFailure(error)}`))))
      )
    })

  const handle = ({ event, seq }: SequencedEvent) =>
    Effect.gen(function*() {
      sawEvent = true
      if (seq > lastSeq) lastSeq = seq
      switch (event.type) {
        case "assistant_text":
          if (event.delta.length === 0) return
          if (mode !== "text") {
            newline()
            terminal.write(style.cyan(`${options.bot}› `))
            mode = "text"
          }
          printedText = true
          terminal.write(markdown.push(event.delta))
          return
        case "thinking_content":
          if (event.delta.length === 0) return
          if (mode !== "thinking") {
            newline()
            terminal.write(style.dim("thinking: "))
            mode = "thinking"
          }
          terminal.write(style.dim(event.delta))
          return
        case "tool_start":
          return note(style.dim(`⚙ ${event.tool} ${inline(event.args, width() - event.tool.length - 4)}`))
        case "tool_result": {
          const took = `${Math.round(event.duration_ms)} ms`
          if (event.is_error) {
            return note(style.red(`✗ ${event.tool} failed after ${took}: ${inline(event.error ?? event.result, width() - 30)}`))
          }
          return note(style.dim(`✓ ${event.tool} ${took}  ${inline(event.result, width() - event.tool.length - took.length - 6)}`))
        }
        case "tool_request":
          return yield* answerToolRequest(event)
        case "approval_request":
          return yield* decideApproval(event)
        case "approval_resolved":
          return note(style.dim(`${event.tool} ${event.verdict}`))
        case "delegation_post":
          return note(style.dim(`→ handed to the bot ${event.target_bot}`))
        case "secret_warning":
          return note(style.yellow(`secret-like text in the message (${event.patterns.map((p) => p.type).join(", ")})`))
        case "rate_limit_wait":
          return note(style.dim(`waiting ${event.wait_seconds} s for the provider's rate limit`))
        case "fallback":
          return note(style.dim(`${event.original_model} failed; ${event.fallback_model} answers`))
        case "context_budget":
          return event.limit > 0 && event.used / event.limit >= 0.8
            ? note(style.dim(`context ${event.used} of ${event.limit} tokens`))
            : undefined
        case "rag_rerank":
          return note(style.dim(`searched the documents: kept ${event.kept.length} of ${event.candidates.length}`))
        case "transcript":
          return note(style.dim(`heard: ${event.text}`))
        case "error":
          return note(style.red(`error: ${event.message}`))
        case "cancelled":
          ended = true
          return note(style.yellow("the run was stopped"))
        case "queued":
          // The message runs later as this task; the stream carries its turn then, unless it is lost first.
          ended = true
          queuedTask = event.task_id
          return note(style.yellow(`queued (${event.reason}) as task ${event.task_id}`))
        case "passive_stored":
          return note(style.dim("stored without a run"))
        case "response":
          ended = true
          response = event
          if (!printedText && event.text.length > 0) {
            newline()
            terminal.write(`${style.cyan(`${options.bot}› `)}${markdown.push(event.text)}`)
            mode = "text"
          }
          newline()
          return
      }
    })

  return {
    handle,
    get lastSeq() {
      return lastSeq
    },
    get sawEvent() {
      return sawEvent
    },
    get ended() {
      return ended
    },
    get response() {
      return response
    },
    /** The task a queued message became, to follow. */
    get queuedTask() {
      return queuedTask
    },
    note,
    newline
  }
}

export type RunView = ReturnType<typeof makeRunView>
