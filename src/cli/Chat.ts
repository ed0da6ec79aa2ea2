/**
 * `cairn chat`: a streaming conversation with a bot in the terminal. Each message streams its run
 * (`POST /chat/stream`); a dropped connection rejoins the run after the last event seen, so the text
 * goes on without a gap or a repeat. Ctrl+C stops the run; a second Ctrl+C quits.
 */
import { Command, Options } from "@effect/cli"
import { HttpClientError } from "@effect/platform"
import { Deferred, Effect, Option, Schedule, Stream } from "effect"
import { randomUUID } from "node:crypto"
import { StreamRefused, type StreamingClient } from "../client.ts"
import type { ImageAttachment } from "../sessions/Attachments.ts"
import { runSlashCommand, type ChatState } from "./ChatCommands.ts"
import { connect, connectionOptions } from "./Connection.ts"
import { describeFailure, style } from "./Output.ts"
import { makeRunView, type RunView } from "./RunView.ts"
import { makeTerminal, type Terminal } from "./Terminal.ts"

/** The client id this client's sessions carry, so `/sessions` can tell them apart. */
export const cliClientId = "cli"

/** A run's stream ended before its last event: the connection dropped or the server went away. */
class StreamDropped extends Error {}

/** A rejoin after a drop: quickly at first, then every few seconds, for two minutes at most. */
export const rejoinSchedule = Schedule.exponential("250 millis").pipe(
  Schedule.either(Schedule.spaced("3 seconds")),
  Schedule.upTo("2 minutes")
)

/** Worth a rejoin: the transport failed, the stream stopped short, or the server was briefly away. */
const isDrop = (error: unknown) =>
  error instanceof StreamDropped ||
  HttpClientError.isHttpClientError(error) ||
  (error instanceof StreamRefused && error.status >= 500)

const pollTask = Schedule.spaced("500 millis").pipe(Schedule.upTo("10 minutes"))

/** A queued message runs later as a task: wait for it and show its answer. */
const followTask = (state: ChatState, view: RunView, taskId: string) =>
  state.client.tasks.get({ path: { id: taskId } }).pipe(
    Effect.filterOrFail(
      (task) => task.status !== "pending" && task.status !== "running",
      () => "still running" as const
    ),
    Effect.retry({ schedule: pollTask, while: (error) => error === "still running" }),
    Effect.match({
      onFailure: (error) =>
        view.note(
          style.dim(
            error === "still running"
              ? `task ${taskId} is still waiting; its answer will be in /history`
              : `its answer will be in /history once it runs (${describeFailure(error)})`
          )
        ),
      onSuccess: (task) => {
        if (task.status === "complete") {
          view.newline()
          state.terminal.write(`${style.cyan(`${state.bot}› `)}${task.result ?? ""}\n`)
        } else view.note(style.red(`the queued message ${task.status}${task.error ? `: ${task.error}` : ""}`))
      }
    })
  )

/** Follows one stream to its end; one that stops before `response` or `cancelled` is a drop. */
const follow = (view: RunView, stream: Stream.Stream<any, unknown>) =>
  stream.pipe(
    Stream.runForEach(view.handle),
    Effect.flatMap(() => (view.ended ? Effect.void : Effect.fail(new StreamDropped())))
  )

/** One message: its run streamed, rejoined after a drop, its queued task followed, its client actions done. */
const sendMessage = (state: ChatState, events: StreamingClient, message: string, attachments: ReadonlyArray<ImageAttachment>) =>
  Effect.gen(function* () {
    const view = makeRunView({ terminal: state.terminal, client: state.client, bot: state.bot, yes: state.yes, noShell: state.noShell })
    const payload = {
      message,
      bot_id: state.bot,
      client_id: cliClientId,
      session_id: state.sessionId,
      attachments,
      passive: false,
      ...(state.channelId ? { channel_id: state.channelId } : {}),
      ...(state.model ? { model_override: state.model } : {})
    }
    yield* follow(view, events.chat(payload)).pipe(
      Effect.catchIf(
        // A drop before any event may mean the message never arrived: it is not sent again.
        (error) => isDrop(error) && view.sawEvent,
        () => {
          view.note(style.yellow("connection lost; rejoining the run…"))
          return Effect.suspend(() => follow(view, events.rejoin(state.sessionId, { after: view.lastSeq }))).pipe(
            Effect.retry({ schedule: rejoinSchedule, while: isDrop })
          )
        }
      ),
      Effect.catchAll((error) => Effect.sync(() => view.note(style.red(`error: ${describeFailure(error)}`))))
    )
    if (view.queuedTask !== undefined) return yield* followTask(state, view, view.queuedTask)
    const response = view.response
    if (response === undefined) return
    state.sessionId = response.session_id || state.sessionId
    for (const action of response.client_actions) yield* runClientAction(state, action)
  })

/** What the server asks this client to do (the `client_action` tool). */
const runClientAction = (state: ChatState, action: unknown) => {
  const { action: name, bot_id, session_id } = (action ?? {}) as { action?: string; bot_id?: string; session_id?: string }
  switch (name) {
    case "new_session":
      return runSlashCommand(state, "/new")
    case "switch_bot":
      return bot_id ? runSlashCommand(state, `/bot ${bot_id}`) : Effect.void
    case "switch_session":
      return session_id ? runSlashCommand(state, `/switch ${session_id}`) : Effect.void
    case "list_sessions":
      return runSlashCommand(state, "/sessions")
    case "list_bots":
      return runSlashCommand(state, "/bot")
    case "show_history":
      return runSlashCommand(state, "/history")
    case "toggle_tts":
      return Effect.sync(() => state.terminal.write(style.dim("  (speech output is not available in the terminal)\n")))
    default:
      return Effect.sync(() => state.terminal.write(style.dim(`  (the server asked for ${name ?? "an action"}, which this client does not know)\n`)))
  }
}

const chatOptions = {
  ...connectionOptions,
  bot: Options.text("bot").pipe(Options.withDescription("The bot to talk to (default: the config file's, else `default`)"), Options.optional),
  channel: Options.text("channel").pipe(Options.withDescription("Talk in a channel (its active session)"), Options.optional),
  session: Options.text("session").pipe(Options.withDescription("Resume a session by id"), Options.optional),
  model: Options.text("model").pipe(Options.withDescription("Override the bot's model"), Options.optional),
  yes: Options.boolean("yes").pipe(Options.withAlias("y"), Options.withDescription("Run the bot's shell commands without asking")),
  noShell: Options.boolean("no-shell").pipe(Options.withDescription("Refuse the bot's shell commands"))
}

const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

export const chatCommand = Command.make("chat", chatOptions, (flags) =>
  Effect.scoped(
    Effect.gen(function* () {
      const connection = yield* connect(flags)
      const terminal: Terminal = yield* makeTerminal
      const sessionId = Option.getOrElse(flags.session, () => randomUUID())
      if (!uuid.test(sessionId)) return yield* Effect.fail(new Error(`--session must be a session id (a UUID), not ${sessionId}`))
      const state: ChatState = {
        client: connection.client,
        terminal,
        bot: Option.getOrElse(flags.bot, () => connection.defaultBot ?? "default"),
        sessionId,
        channelId: Option.getOrUndefined(flags.channel),
        model: Option.getOrUndefined(flags.model),
        yes: flags.yes,
        noShell: flags.noShell,
        attachments: [],
        listed: [],
        prefill: undefined
      }
      const quit = yield* Deferred.make<void>()
      let running = false
      let armed = false
      terminal.onInterrupt(() => {
        if (armed) return Deferred.unsafeDone(quit, Effect.void)
        armed = true
        if (running) {
          terminal.write(style.yellow("\n  ^C stopping the run (Ctrl+C again to quit)\n"))
          Effect.runFork(
            connection.client.chat
              .cancel({ payload: { client_id: cliClientId, bot_id: state.bot, session_id: state.sessionId } })
              .pipe(Effect.catchAll((error) => Effect.sync(() => terminal.write(style.red(`  could not stop the run: ${describeFailure(error)}\n`)))))
          )
        } else terminal.write(style.dim("\n  (Ctrl+C again to quit, or /quit)\n"))
      })

      terminal.write(
        `${style.bold("cairn chat")} ${style.dim(`· ${connection.baseUrl} · bot ${state.bot} · session ${state.sessionId.slice(0, 8)}`)}\n` +
          style.dim("  /help for commands · Ctrl+C stops a run · Ctrl+D quits\n")
      )
      const loop = Effect.gen(function* () {
        while (true) {
          const prefill = state.prefill
          state.prefill = undefined
          const line = yield* terminal.ask(style.bold("you› "), prefill)
          if (Option.isNone(line)) return
          armed = false
          const text = line.value.trim()
          if (text.length === 0) continue
          if (text.startsWith("/")) {
            const outcome = yield* runSlashCommand(state, text)
            if (outcome === "quit") return
            continue
          }
          const attachments = state.attachments
          state.attachments = []
          running = true
          yield* sendMessage(state, connection.streams, text, attachments).pipe(Effect.ensuring(Effect.sync(() => (running = false))))
        }
      })
      yield* Effect.raceFirst(loop, Deferred.await(quit))
      terminal.write("\n")
    })
  )
).pipe(Command.withDescription("Talk to a bot: a streaming chat in the terminal"))
