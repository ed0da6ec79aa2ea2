/**
 * `cairn chat`: a streaming conversation with a bot in the terminal. Each message streams its run
 * (`POST /chat/stream`); a dropped connection rejoins the run after the last event seen, so the text
 * goes on without a gap or a repeat. Ctrl+C stops the run; a second Ctrl+C quits.
 */
import { Command, Options } from "@effect/cli"
import { type CommandExecutor, HttpClientError } from "@effect/platform"
import { Data, Deferred, Effect, Fiber, Option, Schedule, Stream } from "effect"
import { randomUUID } from "node:crypto"
import type { SequencedEvent } from "../agent/Events.ts"
import { type StreamingClient, StreamRefused } from "../client.ts"
import type { ImageAttachment } from "../sessions/Attachments.ts"
import { botNameOf, type ChatState, runSlashCommand } from "./ChatCommands.ts"
import { connect, connectionOptions } from "./Connection.ts"
import { describeFailure, style } from "./Output.ts"
import { makeRunView, type RunView } from "./RunView.ts"
import { makeTerminal } from "./Terminal.ts"

/** The client id this client's sessions carry, so `/sessions` can tell them apart. */
export const cliClientId = "cli"

/** A run's stream ended before its last event: the connection dropped or the server went away. */
class StreamDropped extends Data.TaggedError("StreamDropped") {
  override get message() {
    return "the stream ended before the run did"
  }
}

/** A rejoin after a drop: quickly at first, then every few seconds, for two minutes without progress. */
export const rejoinSchedule = Schedule.exponential("250 millis").pipe(
  Schedule.either(Schedule.spaced("3 seconds")),
  Schedule.upTo("2 minutes")
)

/** Worth a rejoin: the transport failed, the stream stopped short, or the server was briefly away. */
const isDrop = (error: unknown) =>
  error instanceof StreamDropped ||
  HttpClientError.isHttpClientError(error) ||
  (error instanceof StreamRefused && error.status >= 500)

/** How long a started task's run may take to appear. */
const runRecorded = Schedule.spaced("300 millis").pipe(Schedule.intersect(Schedule.recurs(10)))

/** How often a queued message's task is asked whether it has started. */
const pollTask = Schedule.spaced("500 millis").pipe(Schedule.upTo("10 minutes"))

const viewFor = (state: ChatState) =>
  makeRunView({
    terminal: state.terminal,
    client: state.client,
    bot: state.botName,
    yes: state.yes,
    noShell: state.noShell,
    onLocalCommand: (stop) => {
      state.stopLocal = stop
    }
  })

/** Follows one stream to its end; one that stops before its last event is a drop. */
const follow = <E>(view: RunView, stream: Stream.Stream<SequencedEvent, E>) =>
  stream.pipe(
    Stream.runForEach(view.handle),
    Effect.flatMap(() => (view.ended ? Effect.void : Effect.fail(new StreamDropped())))
  )

/**
 * Rejoins the session's run after the last event the view saw, until it ends. The retries start
 * afresh after a rejoin that got further, so a long run survives more than one drop.
 */
const rejoinUntilEnd = (
  view: RunView,
  streams: StreamingClient,
  sessionId: string
): Effect.Effect<void, unknown, CommandExecutor.CommandExecutor> =>
  Effect.suspend(() => {
    const before = view.lastSeq
    return follow(view, streams.rejoin(sessionId, view.sawEvent ? { after: view.lastSeq } : {})).pipe(
      Effect.catchIf(
        (error) => isDrop(error) && view.lastSeq > before,
        () => rejoinUntilEnd(view, streams, sessionId)
      )
    )
  }).pipe(Effect.retry({ schedule: rejoinSchedule, while: isDrop }))

/** What a run's end asks of the chat: the session it ran in, and the client actions it sent. */
const finishRun = (state: ChatState, view: RunView) =>
  Effect.gen(function*() {
    const response = view.response
    if (response === undefined) return
    if (response.session_id) state.sessionId = response.session_id
    state.channelSessionPending = false
    for (const action of response.client_actions) yield* runClientAction(state, action)
  })

/**
 * A queued message runs later as a task: once it starts, its run is the session's and is followed
 * like any other (text, tools, approvals); one that finished in between is shown from its result.
 */
const followTask = (state: ChatState, streams: StreamingClient, view: RunView, taskId: string) =>
  state.client.tasks.get({ path: { id: taskId } }).pipe(
    Effect.filterOrFail(
      (task) => task.status !== "pending",
      () => "waiting" as const
    ),
    Effect.retry({ schedule: pollTask, while: (error) => error === "waiting" }),
    Effect.matchEffect({
      onFailure: (error) =>
        Effect.sync(() =>
          view.note(
            style.dim(
              error === "waiting"
                ? `task ${taskId} is still waiting; its answer will be in /history`
                : `its answer will be in /history once it runs (${describeFailure(error)})`
            )
          )
        ),
      onSuccess: (task) => {
        if (task.status === "running") {
          const taskView = viewFor(state)
          return rejoinUntilEnd(taskView, streams, task.session_id).pipe(
            // A task marked running a moment before its run is recorded: asked again shortly.
            Effect.retry({ schedule: runRecorded, while: (error) => error instanceof StreamRefused && error.status === 404 }),
            Effect.zipRight(finishRun(state, taskView)),
            Effect.catchAll((error) => Effect.sync(() => taskView.note(style.red(`error: ${describeFailure(error)}`))))
          )
        }
        return Effect.sync(() => {
          if (task.status === "complete") {
            view.newline()
            state.terminal.write(`${style.cyan(`${state.botName}› `)}${task.result ?? ""}\n`)
          } else view.note(style.red(`the queued message ${task.status}${task.error ? `: ${task.error}` : ""}`))
        })
      }
    })
  )

/** One message: its run streamed, rejoined after a drop, its queued task followed, its client actions done. */
const sendMessage = (state: ChatState, streams: StreamingClient, message: string, attachments: ReadonlyArray<ImageAttachment>) =>
  Effect.gen(function*() {
    const view = viewFor(state)
    const payload = {
      message,
      bot_id: state.bot,
      client_id: cliClientId,
      attachments,
      passive: false,
      // A channel with no active session yet: the server makes it, and the answer names it.
      ...(state.channelSessionPending ? {} : { session_id: state.sessionId }),
      ...(state.channelId ? { channel_id: state.channelId } : {}),
      ...(state.model ? { model_override: state.model } : {})
    }
    yield* follow(view, streams.chat(payload)).pipe(
      Effect.catchIf(
        // A drop before any event may mean the message never arrived: it is not sent again.
        (error) => isDrop(error) && view.sawEvent && !state.channelSessionPending,
        () => {
          view.note(style.yellow("connection lost; rejoining the run…"))
          return rejoinUntilEnd(view, streams, state.sessionId)
        }
      ),
      Effect.catchAll((error) => Effect.sync(() => view.note(style.red(`error: ${describeFailure(error)}`))))
    )
    // The server keeps a queued message's stream open and carries its turn there; only a stream lost
    // before that turn's response leaves the task to follow.
    if (view.queuedTask !== undefined && view.response === undefined) return yield* followTask(state, streams, view, view.queuedTask)
    yield* finishRun(state, view)
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
      return Effect.sync(() =>
        state.terminal.write(style.dim(`  (the server asked for ${name ?? "an action"}, which this client does not know)\n`))
      )
  }
}

const chatOptions = {
  ...connectionOptions,
  bot: Options.text("bot").pipe(
    Options.withDescription("The bot to talk to (default: the session's or channel's, then the config file's, else `default`)"),
    Options.optional
  ),
  channel: Options.text("channel").pipe(Options.withDescription("Talk in a channel (its active session)"), Options.optional),
  session: Options.text("session").pipe(Options.withDescription("Resume a session by id"), Options.optional),
  model: Options.text("model").pipe(Options.withDescription("Override the bot's model"), Options.optional),
  yes: Options.boolean("yes").pipe(Options.withAlias("y"), Options.withDescription("Run the bot's shell commands without asking")),
  noShell: Options.boolean("no-shell").pipe(Options.withDescription("Refuse the bot's shell commands"))
}

const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

export const chatCommand = Command.make("chat", chatOptions, (flags) =>
  Effect.scoped(
    Effect.gen(function*() {
      const connection = yield* connect(flags)
      const { client } = connection
      // Where the chat starts: a channel's active session, a session by id, or a new one. A
      // session or channel keeps its own bot unless --bot names another (which moves the session).
      let bot = Option.getOrUndefined(flags.bot)
      let sessionId: string = randomUUID()
      let channelSessionPending = false
      const channelId = Option.getOrUndefined(flags.channel)
      if (channelId !== undefined) {
        const channel = yield* client.channels.get({ path: { id: channelId } })
        bot ??= channel.bot_id
        if (channel.active_session_id) sessionId = channel.active_session_id
        else channelSessionPending = true
      }
      if (Option.isSome(flags.session)) {
        if (!uuid.test(flags.session.value)) {
          return yield* Effect.fail(new Error(`--session must be a session id (a UUID), not ${flags.session.value}`))
        }
        sessionId = flags.session.value
        channelSessionPending = false
        if (bot === undefined) {
          bot = Option.getOrUndefined(yield* client.sessions.legacyGet({ path: { id: sessionId } }).pipe(Effect.option))?.bot_id
        }
      }
      const terminal = yield* makeTerminal
      const botId = bot ?? connection.defaultBot ?? "default"
      const state: ChatState = {
        client,
        terminal,
        bot: botId,
        botName: yield* botNameOf(client, botId),
        sessionId,
        channelId,
        channelSessionPending,
        model: Option.getOrUndefined(flags.model),
        yes: flags.yes,
        noShell: flags.noShell,
        attachments: [],
        listed: [],
        prefill: undefined,
        stopLocal: undefined
      }
      const quit = yield* Deferred.make<void>()
      let running = false
      let armed = false
      let cancelling: Fiber.RuntimeFiber<void> | undefined
      terminal.onInterrupt(() => {
        if (armed) return Deferred.unsafeDone(quit, Effect.void)
        armed = true
        if (running) {
          terminal.write(style.yellow("\n  ^C stopping the run (Ctrl+C again to quit)\n"))
          state.stopLocal?.()
          cancelling = Effect.runFork(
            client.chat
              .cancel({ payload: { client_id: cliClientId, bot_id: state.bot, session_id: state.sessionId } })
              .pipe(
                Effect.asVoid,
                Effect.catchAll((error) =>
                  Effect.sync(() => terminal.write(style.red(`  could not stop the run: ${describeFailure(error)}\n`)))
                )
              )
          )
        } else terminal.write(style.dim("\n  (Ctrl+C again to quit, or /quit)\n"))
      })

      terminal.write(
        `${style.bold("cairn chat")} ${
          style.dim(
            `· ${connection.baseUrl} · ${state.botName === state.bot ? `bot ${state.bot}` : `${state.botName} (${state.bot})`} · session ${
              channelSessionPending ? "(the channel's, at the first message)" : state.sessionId.slice(0, 8)
            }`
          )
        }\n` +
          style.dim("  /help for commands · Ctrl+C stops a run · Ctrl+D quits\n")
      )
      const loop = Effect.gen(function*() {
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
      // A stop asked for just before quitting is sent before the process ends.
      if (cancelling) yield* Fiber.await(cancelling).pipe(Effect.timeout("3 seconds"), Effect.ignore)
      terminal.write("\n")
    })
  )).pipe(Command.withDescription("Talk to a bot: a streaming chat in the terminal"))
