/** Sessions: the conversation a client has with a bot, and its stored messages. */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { relaxed } from "../db/Commit.ts"
import { makeDispatchSecrets, maskDispatchConfig } from "../secrets/DispatchConfig.ts"
import { DatabaseInfo } from "../db/Database.ts"
import { Bots } from "../bots/Bots.ts"
import { BotNotFound } from "../bots/Errors.ts"
import { ValidationError } from "../contract/Errors.ts"
import { Message, Session, SessionWithMessages, type NewMessage } from "./Model.ts"
import { SessionsRepo, type MessageRow, type SessionRow } from "./Repo.ts"
import { traced } from "../telemetry/Spans.ts"
import { SessionNotFound } from "./Errors.ts"

export const toSession = (row: SessionRow) => new Session({ ...row, last_active: row.updated_at })

/** A session as a response shows it: dispatch secrets masked. */
export const shownSession = (session: Session): Session =>
  new Session({ ...session, dispatch_config: maskDispatchConfig(session.dispatch_config) })
export const toMessage = (row: MessageRow) =>
  new Message({ ...row, content: row.content ?? "", tool_calls: (row.tool_calls as Message["tool_calls"]) ?? null })

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

export class Sessions extends Effect.Service<Sessions>()("cairn/Sessions", {
  effect: Effect.gen(function* () {
    const repo = yield* SessionsRepo
    const bots = yield* Bots
    const relaxedCommit = relaxed(yield* SqlClient.SqlClient, (yield* DatabaseInfo).backend)
    const secrets = yield* makeDispatchSecrets

    const notFound = (id: string) => new SessionNotFound({ detail: `Session not found: ${id}` })

    // A bot the client names that does not exist is a 404, as the companion clients expect.
    const requireBot = (botId: string) => Effect.mapError(bots.get(botId), () => new BotNotFound({ detail: `Unknown bot: ${botId}` }))

    const get = (id: string) =>
      UUID.test(id)
        ? Effect.flatMap(repo.find(id), (row) =>
            row ? Effect.succeed(toSession(row)) : Effect.fail(notFound(id))
          )
        : Effect.fail(notFound(id))

    /** Idempotent per (client_id, bot_id): creates the session or returns the existing one. */
    const getOrCreate = (input: {
      readonly botId: string
      readonly clientId: string
      readonly dispatchConfig?: Record<string, unknown> | undefined
      readonly channelId?: string | null
    }) =>
      Effect.gen(function* () {
        const existing = yield* repo.findDefault(input.clientId, input.botId)
        if (existing) return toSession(existing)
        yield* requireBot(input.botId)
        // Tokens in a dispatch_config are stored sealed, like a task's (responses mask them).
        const row = yield* repo.getOrCreateDefault(input.clientId, input.botId, secrets.seal(input.dispatchConfig ?? {}), input.channelId ?? null)
        return toSession(row)
      })

    /** A session under an id the client chose; created on first use. */
    const getOrCreateWithId = (id: string, clientId: string, botId: string, channelId: string | null) =>
      Effect.gen(function* () {
        if (!UUID.test(id)) return yield* ValidationError.single(["body", "session_id"], "Expected a UUID")
        const existing = yield* repo.find(id)
        if (existing) return toSession(existing)
        yield* requireBot(botId)
        return toSession(yield* repo.createWithId(id, clientId, botId, channelId))
      })

    /** Moves a session to another bot (a client's "switch bot"); its history stays. */
    const switchBot = (id: string, botId: string) =>
      Effect.gen(function* () {
        yield* requireBot(botId)
        const row = yield* repo.setBot(id, botId)
        if (!row) return yield* notFound(id)
        return toSession(row)
      })

    const setTitle = (id: string, title: string) =>
      Effect.gen(function* () {
        const row = UUID.test(id) ? yield* repo.setTitle(id, title) : undefined
        if (!row) return yield* notFound(id)
        return toSession(row)
      })

    /** Every message's seq, role and text, for a summary (the caller has read the session). */
    const transcript = (id: string) => repo.transcript(id)

    const setSummary = (id: string, summary: string, through: number) =>
      Effect.flatMap(repo.setSummary(id, summary, through), (stored) =>
        stored ? Effect.void : Effect.fail(notFound(id))
      )

    const messages = (id: string) =>
      Effect.gen(function* () {
        yield* get(id)
        return (yield* repo.messages(id)).map(toMessage)
      })

    const withMessages = (id: string) =>
      Effect.gen(function* () {
        const session = yield* get(id)
        const list = (yield* repo.messages(id)).map(toMessage)
        return new SessionWithMessages({ ...session, dispatch_config: maskDispatchConfig(session.dispatch_config), messages: list })
      })

    const list = (filter: { readonly botId?: string; readonly clientId?: string; readonly limit?: number }) =>
      Effect.map(repo.list({ ...filter, limit: filter.limit ?? 100 }), (rows) => rows.map(toSession))

    const remove = (id: string) =>
      Effect.flatMap(repo.remove(UUID.test(id) ? id : "00000000-0000-0000-0000-000000000000"), (removed) =>
        removed ? Effect.void : Effect.fail(notFound(id))
      )

    /** Stores a message; `durable: false` commits relaxed (see db/Commit.ts). */
    const append = (sessionId: string, message: NewMessage, options: { readonly durable?: boolean } = {}) =>
      Effect.map(options.durable === false ? relaxedCommit(repo.append(sessionId, message)) : repo.append(sessionId, message), toMessage)

    return traced("Sessions", {
      get,
      getOrCreate,
      getOrCreateWithId,
      switchBot,
      setTitle,
      transcript,
      setSummary,
      messages,
      withMessages,
      list,
      remove,
      append,
      recent: repo.recentMessages
    } as const)
  }),
  dependencies: [SessionsRepo.Default, Bots.Default]
}) {}
