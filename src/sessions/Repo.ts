/** SQL for sessions and messages. */
import { repository } from "../db/Repository.ts"
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { randomUUID } from "node:crypto"
import type { NewMessage } from "./Model.ts"

export interface SessionRow {
  readonly id: string
  readonly bot_id: string
  readonly client_id: string
  readonly channel_id: string | null
  readonly dispatch_config: Record<string, unknown>
  readonly created_at: Date
  readonly updated_at: Date
}

export interface MessageRow {
  readonly id: string
  readonly session_id: string
  readonly role: "system" | "user" | "assistant" | "tool"
  readonly content: string | null
  readonly tool_calls: ReadonlyArray<any> | null
  readonly tool_call_id: string | null
  readonly attachments: ReadonlyArray<unknown>
  readonly metadata: Record<string, unknown>
  readonly created_at: Date
}

/** A stored message as context assembly reads it. */
export interface HistoryRow {
  readonly role: MessageRow["role"]
  readonly content: string | null
  readonly tool_calls: ReadonlyArray<any> | null
  readonly tool_call_id: string | null
  readonly cancelled: boolean
}

const sessionColumns = "id, bot_id, client_id, channel_id, dispatch_config, created_at, updated_at"
const messageColumns = "id, session_id, role, content, tool_calls, tool_call_id, attachments, metadata, created_at"

export class SessionsRepo extends Effect.Service<SessionsRepo>()("cairn/SessionsRepo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const first = <A>(rows: ReadonlyArray<A>) => rows[0]
    return repository("SessionsRepo", {
      findDefault: (clientId: string, botId: string) =>
        Effect.map(
          sql<SessionRow>`SELECT ${sql.literal(sessionColumns)} FROM sessions WHERE default_for = ${`${clientId}\u0001${botId}`}`,
          first
        ),
      find: (id: string) =>
        Effect.map(sql<SessionRow>`SELECT ${sql.literal(sessionColumns)} FROM sessions WHERE id = ${id}`, first),
      /** The session for (client_id, bot_id), created when missing; race-free across processes. */
      getOrCreateDefault: (clientId: string, botId: string, dispatchConfig: Record<string, unknown>, channelId: string | null) =>
        Effect.gen(function* () {
          const key = `${clientId}\u0001${botId}`
          yield* sql`INSERT INTO sessions (id, bot_id, client_id, channel_id, default_for, dispatch_config)
                     VALUES (${randomUUID()}, ${botId}, ${clientId}, ${channelId}, ${key}, ${JSON.stringify(dispatchConfig)}::jsonb)
                     ON CONFLICT (default_for) DO NOTHING`
          const rows = yield* sql<SessionRow>`SELECT ${sql.literal(sessionColumns)} FROM sessions WHERE default_for = ${key}`
          return rows[0]!
        }),
      /** A session with a caller-chosen id (companion clients send ids the server has not seen). */
      createWithId: (id: string, clientId: string, botId: string, channelId: string | null) =>
        Effect.gen(function* () {
          yield* sql`INSERT INTO sessions (id, bot_id, client_id, channel_id) VALUES (${id}, ${botId}, ${clientId}, ${channelId})
                     ON CONFLICT (id) DO NOTHING`
          const rows = yield* sql<SessionRow>`SELECT ${sql.literal(sessionColumns)} FROM sessions WHERE id = ${id}`
          return rows[0]!
        }),
      list: (filter: { readonly botId?: string; readonly clientId?: string; readonly limit: number }) =>
        sql<SessionRow>`SELECT ${sql.literal(sessionColumns)} FROM sessions
          WHERE (${filter.botId ?? null}::text IS NULL OR bot_id = ${filter.botId ?? null})
            AND (${filter.clientId ?? null}::text IS NULL OR client_id = ${filter.clientId ?? null})
          ORDER BY updated_at DESC LIMIT ${filter.limit}`,
      remove: (id: string) =>
        Effect.map(sql<{ id: string }>`DELETE FROM sessions WHERE id = ${id} RETURNING id`, (rows) => rows.length === 1),
      messages: (sessionId: string) =>
        sql<MessageRow>`SELECT ${sql.literal(messageColumns)} FROM messages WHERE session_id = ${sessionId} ORDER BY seq`,
      /**
       * The most recent messages, oldest first, with only what context assembly reads (every turn
       * reads up to the history limit, so the columns it does not need are not fetched or parsed).
       */
      recentMessages: (sessionId: string, limit: number) =>
        Effect.map(
          sql<HistoryRow>`SELECT role, content, tool_calls, tool_call_id,
                                 coalesce((metadata->>'cancelled')::boolean, false) AS cancelled
                          FROM messages WHERE session_id = ${sessionId}
                          ORDER BY seq DESC LIMIT ${limit}`,
          (rows) => [...rows].reverse()
        ),
      /** One statement: the message and the session's activity time commit together. */
      append: (sessionId: string, message: NewMessage) =>
        Effect.suspend(() => {
          const id = randomUUID()
          // Only the time comes back: the rest of the row is what was sent (no JSON read back).
          return Effect.map(
            sql<{ created_at: Date }>`WITH inserted AS (
                INSERT INTO messages (id, session_id, role, content, tool_calls, tool_call_id, attachments, metadata)
                VALUES (${id}, ${sessionId}, ${message.role}, ${message.content},
                        ${message.tool_calls ? JSON.stringify(message.tool_calls) : null}::jsonb, ${message.tool_call_id ?? null},
                        ${JSON.stringify(message.attachments ?? [])}::jsonb, ${JSON.stringify(message.metadata ?? {})}::jsonb)
                RETURNING created_at
              ), touched AS (UPDATE sessions SET updated_at = now() WHERE id = ${sessionId})
              SELECT created_at FROM inserted`,
            (rows): MessageRow => ({
              id,
              session_id: sessionId,
              role: message.role,
              content: message.content,
              tool_calls: message.tool_calls ?? null,
              tool_call_id: message.tool_call_id ?? null,
              attachments: message.attachments ?? [],
              metadata: message.metadata ?? {},
              created_at: rows[0]!.created_at
            })
          )
        }),
    })
  })
}) {}
