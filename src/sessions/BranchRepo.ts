/**
 * SQL for what a user does to a conversation beyond its messages (migration 0086): its own model,
 * instructions and temperature; branching it at a message (edit and resend, regenerate); the
 * family of a conversation and its branches; and an import that stores a whole exported one.
 */
import { SqlClient } from "@effect/sql"
import { Effect, Schema } from "effect"
import { randomUUID } from "node:crypto"
import { decodeRows, firstRow, repository, transactions } from "../db/Repository.ts"
import type { SessionExport } from "./Model.ts"
import { sessionColumns, SessionRow } from "./Repo.ts"
import { titleFrom } from "./Rows.ts"

const FamilyRow = Schema.Struct({
  id: Schema.String,
  forked_from: Schema.NullOr(Schema.String),
  fork_point: Schema.NullOr(Schema.Number),
  title: Schema.NullOr(Schema.String),
  created_at: Schema.DateFromSelf,
  owner: Schema.NullOr(Schema.String),
  bot_id: Schema.String
})
export type FamilyRow = typeof FamilyRow.Type

const ResentRow = Schema.Struct({ role: Schema.String, attachments: Schema.NullOr(Schema.Array(Schema.Unknown)) })

/** What a conversation's settings change to: an absent field stays, null clears it. */
export interface SessionSettings {
  readonly model?: string | null | undefined
  readonly system_prompt?: string | null | undefined
  readonly temperature?: number | null | undefined
}

/** A message's metadata as an import stores it: the run it belonged to is another server's. */
const importedMetadata = (metadata: Readonly<Record<string, unknown>> | undefined) => {
  const { run_id: _run, ...rest } = metadata ?? {}
  return { ...rest, imported: true }
}

export class SessionBranchesRepo extends Effect.Service<SessionBranchesRepo>()("cairn/SessionBranchesRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const inTransaction = transactions(sql)
    const sessionRows = decodeRows(SessionRow)
    const one = (id: string) =>
      sql`SELECT ${sql.literal(sessionColumns)} FROM sessions WHERE id = ${id}`.pipe(sessionRows, Effect.map(firstRow))

    return repository("SessionBranchesRepo", {
      /** Changes the settings sent; undefined when the session is gone. */
      configure: (id: string, settings: SessionSettings) =>
        sessionRows(
          sql`UPDATE sessions SET
                model = CASE WHEN ${settings.model !== undefined}::boolean THEN ${settings.model ?? null}::text ELSE model END,
                system_prompt = CASE WHEN ${settings.system_prompt !== undefined}::boolean THEN ${settings.system_prompt ?? null}::text
                                     ELSE system_prompt END,
                temperature = CASE WHEN ${settings.temperature !== undefined}::boolean THEN ${
            settings.temperature ?? null
          }::double precision
                                   ELSE temperature END
              WHERE id = ${id} RETURNING ${sql.literal(sessionColumns)}`
        ).pipe(Effect.map(firstRow)),
      /**
       * A branch of `sourceId` holding copies of its messages before `messageId`, with its title,
       * settings, bot and owner; undefined when that message is not the session's. One transaction:
       * the branch and its messages (and their exact count, History.ts relies on it) appear together.
       */
      fork: (sourceId: string, messageId: string) =>
        inTransaction(Effect.gen(function*() {
          const [point] = yield* sql<
            { seq: string | number }
          >`SELECT seq FROM messages WHERE id = ${messageId} AND session_id = ${sourceId}`
          if (point === undefined) return undefined
          const id = randomUUID()
          yield* sql`INSERT INTO sessions (id, bot_id, client_id, channel_id, owner, title, dispatch_config, model, system_prompt,
                       temperature, forked_from, fork_point)
                     SELECT ${id}, bot_id, client_id, channel_id, owner, title, dispatch_config, model, system_prompt, temperature, id,
                       (SELECT count(*) FROM messages WHERE session_id = ${sourceId} AND seq < ${point.seq})::int
                     FROM sessions WHERE id = ${sourceId}`
          yield* sql`INSERT INTO messages (id, session_id, role, content, tool_calls, tool_call_id, attachments, metadata, created_at)
                     SELECT gen_random_uuid(), ${id}, role, content, tool_calls, tool_call_id, attachments, metadata, created_at
                     FROM messages WHERE session_id = ${sourceId} AND seq < ${point.seq} ORDER BY seq`
          yield* sql`UPDATE sessions SET message_count = fork_point WHERE id = ${id}`
          return yield* one(id)
        })),
      /** A message's role and attachments, when it is one of these sessions' (regenerate, edit and resend take its images again). */
      messageIn: (messageId: string, sessionIds: ReadonlyArray<string>) =>
        sql`SELECT role, attachments FROM messages WHERE id = ${messageId} AND session_id IN ${sql.in(sessionIds)}`.pipe(
          decodeRows(ResentRow),
          Effect.map(firstRow)
        ),
      /** The conversation `id` belongs to: its first session and every branch of it, oldest first. */
      family: (id: string) =>
        sql`WITH RECURSIVE up AS (
              SELECT id, forked_from, 0 AS depth FROM sessions WHERE id = ${id}
              UNION ALL
              SELECT s.id, s.forked_from, up.depth + 1 FROM sessions s JOIN up ON s.id = up.forked_from WHERE up.depth < 1000
            ),
            down AS (
              SELECT s.id FROM sessions s WHERE s.id = (SELECT up.id FROM up ORDER BY up.depth DESC LIMIT 1)
              UNION ALL
              SELECT s.id FROM sessions s JOIN down ON s.forked_from = down.id
            )
            SELECT s.id, s.forked_from, s.fork_point, s.title, s.created_at, s.owner, s.bot_id
            FROM sessions s JOIN down ON s.id = down.id ORDER BY s.created_at, s.id`.pipe(decodeRows(FamilyRow)),
      /** A new session holding an export's messages in their order, owned by `owner`. */
      importSession: (
        input: { readonly botId: string; readonly clientId: string; readonly owner: string },
        exported: SessionExport
      ) =>
        inTransaction(Effect.gen(function*() {
          const id = randomUUID()
          const { session, messages } = exported
          const title = session.title ?? messages.map((message) => titleFrom(message)).find((found) => found !== null) ?? null
          yield* sql`INSERT INTO sessions (id, bot_id, client_id, owner, title, model, system_prompt, temperature, message_count)
                     VALUES (${id}, ${input.botId}, ${input.clientId}, ${input.owner}, ${title}, ${session.model},
                       ${session.system_prompt}, ${session.temperature}, ${messages.length})`
          const rows = messages.map((message) => ({
            role: message.role,
            content: message.content,
            tool_calls: message.tool_calls ?? null,
            tool_call_id: message.tool_call_id ?? null,
            attachments: message.attachments ?? [],
            metadata: importedMetadata(message.metadata),
            created_at: (message.created_at ?? new Date()).toISOString()
          }))
          yield* sql`INSERT INTO messages (id, session_id, role, content, tool_calls, tool_call_id, attachments, metadata, created_at)
                     SELECT gen_random_uuid(), ${id}, e.value->>'role', e.value->>'content',
                       CASE WHEN jsonb_typeof(e.value->'tool_calls') = 'array' THEN e.value->'tool_calls' END,
                       e.value->>'tool_call_id', e.value->'attachments', e.value->'metadata', (e.value->>'created_at')::timestamptz
                     FROM jsonb_array_elements(${JSON.stringify(rows)}::jsonb) WITH ORDINALITY AS e(value, n) ORDER BY e.n`
          return (yield* one(id))!
        }))
    })
  })
}) {}
