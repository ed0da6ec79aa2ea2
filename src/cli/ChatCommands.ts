/**
 * The chat's slash commands: sessions (`/new`, `/sessions`, `/switch`, `/history`, `/summarize`),
 * the bot and model (`/bot`, `/model`), input (`/attach`, `/voice`) and `/help`. Each goes through
 * the typed client; a failure is one red line, and the chat goes on.
 */
import { FileSystem, Path } from "@effect/platform"
import { Effect } from "effect"
import { randomUUID } from "node:crypto"
import type { CairnClient } from "../client.ts"
import { type ImageAttachment, sniffImage } from "../sessions/Attachments.ts"
import type { Session } from "../sessions/Model.ts"
import { clip, columns, describeFailure, style } from "./Output.ts"
import type { Terminal } from "./Terminal.ts"

export interface ChatState {
  readonly client: CairnClient
  readonly terminal: Terminal
  bot: string
  /** The bot's name, as the answers are headed (its id when the list cannot be read). */
  botName: string
  sessionId: string
  channelId: string | undefined
  /** In a channel with no active session yet: the first message makes it (sessionId is a placeholder). */
  channelSessionPending: boolean
  model: string | undefined
  readonly yes: boolean
  readonly noShell: boolean
  /** Images for the next message. */
  attachments: Array<ImageAttachment>
  /** The last `/sessions` listing, for `/switch <n>`. */
  listed: ReadonlyArray<Session>
  /** Text to put in the next prompt (a voice transcript, to edit before sending). */
  prefill: string | undefined
  /** Stops the local command a client tool runs, while one runs. */
  stopLocal: (() => void) | undefined
}

/** The bot's name from the bots the key may list; its id when it is not among them. */
export const botNameOf = (client: CairnClient, botId: string) =>
  client.bots.legacyList().pipe(
    Effect.map((bots) => bots.find((bot) => bot.id === botId)?.name || botId),
    Effect.orElseSucceed(() => botId)
  )

/** A session of the chat's own making: no longer the channel's. */
const leaveChannel = (state: ChatState) => {
  state.channelId = undefined
  state.channelSessionPending = false
}

export const helpText = `Commands:
  /new                 start a new session with the same bot
  /sessions            list this bot's recent sessions
  /switch <n|id>       continue a session (its number in /sessions, or its id)
  /history [n]         show the session's last n messages (default 20)
  /bot [id]            list the bots, or switch to one (a new session)
  /model [name|off]    show, set or clear the model override
  /attach <image>      send an image (png, jpeg, gif, webp) with the next message
  /voice <wav|m4a>     transcribe an audio file into the prompt, to edit and send
  /summarize           have the bot title and summarize this session
  /help                this list
  /quit                leave (also Ctrl+D, or Ctrl+C twice)`

const audioTypes: Readonly<Record<string, string>> = {
  ".wav": "audio/wav",
  ".m4a": "audio/mp4",
  ".mp3": "audio/mpeg",
  ".ogg": "audio/ogg",
  ".webm": "audio/webm",
  ".flac": "audio/flac"
}

const when = (date: Date) => date.toISOString().slice(0, 16).replace("T", " ")

const say = (state: ChatState, text: string) => Effect.sync(() => state.terminal.write(`${text}\n`))

const listSessions = (state: ChatState) =>
  Effect.gen(function*() {
    const sessions = yield* state.client.sessions.legacyList({ urlParams: { bot_id: state.bot, limit: 20 } })
    state.listed = sessions
    if (sessions.length === 0) return yield* say(state, style.dim(`  no sessions with ${state.bot} yet`))
    const width = columns() - 34
    const lines = sessions.map((session, i) => {
      const marker = session.id === state.sessionId ? style.green("*") : " "
      return `${marker}${String(i + 1).padStart(3)}  ${session.id.slice(0, 8)}  ${when(session.last_active)}  ${
        clip(session.title ?? "(untitled)", width)
      }`
    })
    yield* say(state, lines.join("\n"))
  })

const switchSession = (state: ChatState, target: string) =>
  Effect.gen(function*() {
    const byNumber = /^\d+$/.test(target) ? state.listed[Number(target) - 1] : undefined
    const sessions = byNumber
      ? [byNumber]
      : state.listed.length > 0
      ? state.listed
      : yield* state.client.sessions.legacyList({ urlParams: { bot_id: state.bot, limit: 100 } })
    const found = byNumber ?? sessions.find((session) => session.id === target) ?? sessions.find((session) => session.id.startsWith(target))
    const session = found ?? (yield* state.client.sessions.legacyGet({ path: { id: target } }).pipe(Effect.orElseSucceed(() => undefined)))
    if (session === undefined) return yield* say(state, style.red(`  no session ${target} (see /sessions)`))
    state.sessionId = session.id
    if (session.bot_id !== state.bot) state.botName = yield* botNameOf(state.client, session.bot_id)
    state.bot = session.bot_id
    leaveChannel(state)
    yield* say(state, style.dim(`  session ${session.id.slice(0, 8)} · ${session.title ?? "(untitled)"} · bot ${session.bot_id}`))
  })

const showHistory = (state: ChatState, count: number) =>
  Effect.gen(function*() {
    const session = yield* state.client.sessions.legacyGet({ path: { id: state.sessionId } }).pipe(
      Effect.catchTag("NotFound", () => Effect.succeed(undefined))
    )
    const messages = (session?.messages ?? []).filter((message) => message.role !== "system").slice(-count)
    if (messages.length === 0) return yield* say(state, style.dim("  no messages in this session yet"))
    const width = columns() - 8
    for (const message of messages) {
      if (message.role === "tool") {
        yield* say(state, style.dim(`  ↳ ${clip(message.content.replace(/\s+/g, " "), width)}`))
      } else if (message.role === "assistant" && message.content === "" && message.tool_calls) {
        yield* say(state, style.dim(`  ⚙ ${message.tool_calls.map((call) => call.function.name).join(", ")}`))
      } else {
        const who = message.role === "user"
          ? style.bold("you› ")
          : style.cyan(`${session!.bot_id === state.bot ? state.botName : session!.bot_id}› `)
        yield* say(state, `${who}${message.content}`)
      }
    }
  })

const switchBot = (state: ChatState, botId: string | undefined) =>
  Effect.gen(function*() {
    const bots = yield* state.client.bots.legacyList()
    if (botId === undefined) {
      const lines = bots.map((bot) =>
        `${bot.id === state.bot ? style.green("*") : " "} ${bot.id.padEnd(20)} ${clip(bot.name, columns() - 24)}`
      )
      return yield* say(state, lines.join("\n"))
    }
    if (!bots.some((bot) => bot.id === botId)) return yield* say(state, style.red(`  no bot ${botId} (see /bot)`))
    state.bot = botId
    state.botName = bots.find((bot) => bot.id === botId)?.name || botId
    state.sessionId = randomUUID()
    leaveChannel(state)
    yield* say(state, style.dim(`  now talking to ${botId}, in a new session ${state.sessionId.slice(0, 8)}`))
  })

const attach = (state: ChatState, file: string) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const bytes = yield* fs.readFile(file)
    const mime = sniffImage(bytes)
    if (mime === undefined) return yield* say(state, style.red(`  ${file} is not a png, jpeg, gif or webp image`))
    state.attachments.push({ type: "image", mime_type: mime, name: path.basename(file), data: Buffer.from(bytes).toString("base64") })
    yield* say(state, style.dim(`  attached ${path.basename(file)} (${mime}, ${Math.ceil(bytes.length / 1024)} KB) to your next message`))
  })

const voice = (state: ChatState, file: string) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const type = audioTypes[path.extname(file).toLowerCase()]
    if (type === undefined) return yield* say(state, style.red(`  ${file}: give a .wav, .m4a, .mp3, .ogg, .webm or .flac file`))
    const bytes = yield* fs.readFile(file)
    const form = new FormData()
    form.append("file", new Blob([bytes], { type }), path.basename(file))
    yield* say(state, style.dim("  transcribing…"))
    // The typed client sends a FormData payload as multipart; /transcribe reads its `file` field.
    const transcript = yield* state.client.speech.transcribe({ payload: form as unknown as Uint8Array })
    if (transcript.text.trim().length === 0) return yield* say(state, style.yellow("  no speech was heard in that file"))
    state.prefill = transcript.text.trim()
    yield* say(state, style.dim("  the transcript is in your prompt: edit it, then press Enter to send"))
  })

const summarize = (state: ChatState) =>
  Effect.gen(function*() {
    yield* say(state, style.dim("  summarizing…"))
    const summary = yield* state.client.chat.summarize({ path: { id: state.sessionId } })
    yield* say(state, `${style.bold(summary.title)}\n${summary.summary}`)
  })

/** Runs one slash command; `quit` ends the chat. */
export const runSlashCommand = (state: ChatState, line: string): Effect.Effect<"quit" | void, never, FileSystem.FileSystem | Path.Path> => {
  const [command = "", ...rest] = line.trim().split(/\s+/)
  const argument = rest.join(" ")
  const run = (): Effect.Effect<"quit" | void, unknown, FileSystem.FileSystem | Path.Path> => {
    switch (command) {
      case "/new":
        state.sessionId = randomUUID()
        leaveChannel(state)
        return say(state, style.dim(`  new session ${state.sessionId.slice(0, 8)} with ${state.bot}`))
      case "/sessions":
        return listSessions(state)
      case "/switch":
        return argument ? switchSession(state, argument) : say(state, style.red("  /switch needs a session number or id (see /sessions)"))
      case "/history":
        return showHistory(state, /^\d+$/.test(argument) ? Number(argument) : 20)
      case "/bot":
        return switchBot(state, argument || undefined)
      case "/model":
        if (argument === "off" || argument === "default") state.model = undefined
        else if (argument) state.model = argument
        return say(state, style.dim(`  model: ${state.model ?? "the bot's own"}`))
      case "/attach":
        return argument ? attach(state, argument) : say(state, style.red("  /attach needs an image file"))
      case "/voice":
        return argument ? voice(state, argument) : say(state, style.red("  /voice needs an audio file (.wav or .m4a)"))
      case "/summarize":
        return summarize(state)
      case "/help":
        return say(state, helpText)
      case "/quit":
      case "/exit":
        return Effect.succeed("quit" as const)
      default:
        return say(state, style.red(`  unknown command ${command} (/help lists them)`))
    }
  }
  return run().pipe(Effect.catchAll((error) => say(state, style.red(`  ${command}: ${describeFailure(error)}`))))
}
