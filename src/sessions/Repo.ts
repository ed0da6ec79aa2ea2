/** SQL for sessions and messages. */
import { SqlClient } from "@effect/sql"
import { Effect, Schema } from "effect"
import { randomUUID } from "node:crypto"
import { type CarriedWrites, relaxedFromItem, relaxedJoin, withParts } from "../db/Commit.ts"
import { DirectStatements } from "../db/Direct.ts"
import { decodeRows, firstRow, repository } from "../db/Repository.ts"
import { dispatchConfigColumn, resealPending } from "../db/Reseal.ts"
import { Message, type NewMessage, Session } from "./Model.ts"
import { decodeStored, type StoredMessage, SummaryRow, titleFrom, TranscriptRow } from "./Rows.ts"
export type { StoredMessage } from "./Rows.ts"

/**
 * A session as stored: the API's `Session` as the driver hands it over (its type side: timestamps
 * as `Date`, the dispatch config sealed rather than masked) with its owner; `last_active` is the
 * service's (`updated_at`).
 */
export const SessionRow = Schema.Struct(Session.fields).pipe(
  Schema.omit("last_active"),
  Schema.typeSchema,
  Schema.extend(Schema.Struct({ owner: Schema.NullOr(Schema.String) }))
)
export type SessionRow = typeof SessionRow.Type

/** A session a search found, with the words around its first matching message. */
const SessionMatchRow = SessionRow.pipe(Schema.extend(Schema.Struct({ snippet: Schema.NullOr(Schema.String) })))

const Role = Message.fields.role
/** Tool calls as the model sent them (OpenAI's shape); kept as stored. */
const ToolCalls = Schema.NullOr(Schema.Array(Schema.Any))

/**
 * A message as stored: the API's `Message` as the driver hands it over, but for its content (null for
 * an assistant message that only calls tools; "" on the wire) and its tool calls, kept as stored.
 */
export const MessageRow = Schema.Struct(Message.fields).pipe(
  Schema.omit("content", "tool_calls"),
  Schema.typeSchema,
  Schema.extend(Schema.Struct({ content: Schema.NullOr(Schema.String), tool_calls: ToolCalls }))
)
export type MessageRow = typeof MessageRow.Type

/** A stored message as context assembly reads it. */
export const HistoryRow = Schema.Struct({
  /** The message's place in the session (compaction cuts by it). */
  seq: Schema.optional(Schema.Number),
  /** Stored passively (not addressed to the bot). */
  passive: Schema.optional(Schema.Boolean),
  role: Role,
  content: Schema.NullOr(Schema.String),
  tool_calls: ToolCalls,
  tool_call_id: Schema.NullOr(Schema.String),
  cancelled: Schema.Boolean,
  /** The message's image attachments; null when it has none. */
  attachments: Schema.optional(Schema.NullOr(Schema.Array(Schema.Unknown))),
  /** The session's summary of the messages before these (the same on every row), if it has one. */
  summary: Schema.optional(Schema.NullOr(Schema.String)),
  /** What the model's provider gave with this message for the rest of its tool loop (`ChatMessage.providerState`). */
  provider_state: Schema.optional(Schema.NullOr(Schema.Unknown)),
  /** Where the message's content came from (agent/Provenance.ts); absent on rows stored before origins were kept. */
  origin: Schema.optional(Schema.NullOr(Schema.Unknown))
})
export type HistoryRow = typeof HistoryRow.Type

/** What `historySince` answers: the session's summary state, how many messages it holds, and the new rows oldest first. */
export interface HistorySlice {
  readonly through: number
  readonly summary: string | null
  readonly total: number
  readonly rows: ReadonlyArray<HistoryRow & { readonly seq: number }>
}

/** A row of `historySince`: the session's summary state and message count on each, and a message or (none new) nulls. */
const HistorySliceRow = Schema.Struct({
  through: Schema.Number,
  summary: Schema.NullOr(Schema.String),
  total: Schema.Number,
  seq: Schema.NullOr(Schema.Number),
  passive: Schema.NullOr(Schema.Boolean),
  role: Schema.NullOr(Role),
  content: Schema.NullOr(Schema.String),
  tool_calls: ToolCalls,
  tool_call_id: Schema.NullOr(Schema.String),
  cancelled: Schema.NullOr(Schema.Boolean),
  attachments: Schema.NullOr(Schema.Array(Schema.Unknown)),
  provider_state: Schema.optional(Schema.NullOr(Schema.Unknown)),
  origin: Schema.optional(Schema.NullOr(Schema.Unknown))
})

const Inserted = Schema.Struct({ created_at: Schema.DateFromSelf, stored: Schema.Unknown })
const Stored = Schema.Struct({ stored: Schema.Unknown })
const runGate = "run_fence"

export const sessionColumns =
  "id, bot_id, client_id, channel_id, dispatch_config, title, owner, created_at, updated_at, pinned_at IS NOT NULL AS pinned, archived_at IS NOT NULL AS archived, model, system_prompt, temperature, forked_from, fork_point"
const messageColumns = "id, session_id, role, content, tool_calls, tool_call_id, attachments, metadata, created_at"

export class SessionsRepo extends Effect.Service<SessionsRepo>()("cairn/SessionsRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    // A turn's statements: its session, its history, and a message stored on its own.
    const { rows } = yield* DirectStatements
    const sessionRows = decodeRows(SessionRow)
    const matchRows = decodeRows(SessionMatchRow)
    /**
     * Storing a message: its row, and its session's activity time and message count (the first
     * user message with text names an untitled session). The count is exact because only these
     * writes add messages and only a session's removal takes them away (sessions/History.ts relies
     * on it). Two data-modifying statements, named, so a caller's statement can carry them as parts
     * of its own `WITH` (`appendWrites`); with a `gate`, only when the `WITH` part of that name
     * answered a row (db/Commit.ts, `GatedWrites`). `stored` is what the statement answers for them
     * (`StoredMessage` as JSON, null when nothing was stored): the rest of the statement runs on
     * the snapshot before these writes, so the newest seq it reads is the one before the message.
     */
    const messageWrites = (id: string, sessionId: string, message: NewMessage, gate?: string) => ({
      parts: [
        [
          "message_row",
          sql`INSERT INTO messages (id, session_id, role, content, tool_calls, tool_call_id, attachments, metadata)
        SELECT ${id}::uuid, ${sessionId}::uuid, ${message.role}::text, ${message.content}::text,
               ${message.tool_calls ? JSON.stringify(message.tool_calls) : null}::jsonb, ${message.tool_call_id ?? null}::text,
               ${JSON.stringify(message.attachments ?? [])}::jsonb, ${JSON.stringify(message.metadata ?? {})}::jsonb${
            gate ? sql` FROM ${sql(gate)}` : sql``
          }
        RETURNING seq, created_at`
        ],
        [
          "message_touch",
          sql`UPDATE sessions SET updated_at = now(), title = COALESCE(title, ${titleFrom(message)}), message_count = message_count + 1
        WHERE id = ${sessionId}${gate ? sql` AND EXISTS (SELECT FROM ${sql(gate)})` : sql``}
        RETURNING message_count, summary_through, summary`
        ]
      ] as const,
      stored: sql`(SELECT json_build_object('seq', r.seq, 'total', t.message_count, 'through', coalesce(t.summary_through, 0),
          'summary', t.summary, 'before', coalesce((SELECT max(seq) FROM messages WHERE session_id = ${sessionId}), 0))
        FROM message_row r, message_touch t)`
    })

    return repository("SessionsRepo", {
      /** Seals, once (db/Reseal.ts), the URL credentials an older release stored in the clear. */
      resealDispatchConfigs: (seal: (config: Record<string, unknown>) => Record<string, unknown>) =>
        resealPending("sessions.dispatch_config", dispatchConfigColumn(sql, "sessions", "id", seal)),
      findDefault: (key: string) =>
        rows(sql`SELECT ${sql.literal(sessionColumns)} FROM sessions WHERE default_for = ${key}`).pipe(sessionRows, Effect.map(firstRow)),
      find: (id: string) =>
        sql`SELECT ${sql.literal(sessionColumns)} FROM sessions WHERE id = ${id}`.pipe(sessionRows, Effect.map(firstRow)),
      /** The session under a default key (see `defaultKey`), created when missing; race-free across processes. */
      getOrCreateDefault: (
        key: string,
        clientId: string,
        botId: string,
        dispatchConfig: Record<string, unknown>,
        channelId: string | null,
        owner: string | null
      ) =>
        Effect.gen(function*() {
          yield* sql`INSERT INTO sessions (id, bot_id, client_id, channel_id, default_for, dispatch_config, owner)
                     VALUES (${randomUUID()}, ${botId}, ${clientId}, ${channelId}, ${key}, ${
            JSON.stringify(dispatchConfig)
          }::jsonb, ${owner})
                     ON CONFLICT (default_for) DO NOTHING`
          const rows = yield* sessionRows(sql`SELECT ${sql.literal(sessionColumns)} FROM sessions WHERE default_for = ${key}`)
          return rows[0]!
        }),
      /** A session with a caller-chosen id (companion clients send ids the server has not seen). */
      createWithId: (id: string, clientId: string, botId: string, channelId: string | null, owner: string | null) =>
        Effect.gen(function*() {
          yield* sql`INSERT INTO sessions (id, bot_id, client_id, channel_id, owner) VALUES (${id}, ${botId}, ${clientId}, ${channelId}, ${owner})
                     ON CONFLICT (id) DO NOTHING`
          const rows = yield* sessionRows(sql`SELECT ${sql.literal(sessionColumns)} FROM sessions WHERE id = ${id}`)
          return rows[0]!
        }),
      /**
       * `owner` set: only that owner's sessions. Pinned first; archived ones only when asked for (and
       * then only they). A branch is reached through its conversation (`family`), not listed.
       */
      list: (
        filter: {
          readonly botId?: string
          readonly clientId?: string
          readonly owner?: string
          readonly archived?: boolean
          readonly limit: number
        }
      ) =>
        sql`SELECT ${sql.literal(sessionColumns)} FROM sessions
          WHERE (${filter.botId ?? null}::text IS NULL OR bot_id = ${filter.botId ?? null})
            AND (${filter.clientId ?? null}::text IS NULL OR client_id = ${filter.clientId ?? null})
            AND (${filter.owner ?? null}::text IS NULL OR owner = ${filter.owner ?? null})
            AND (archived_at IS NOT NULL) = ${filter.archived ?? false} AND forked_from IS NULL
          ORDER BY pinned_at IS NULL, pinned_at DESC, updated_at DESC LIMIT ${filter.limit}`.pipe(sessionRows),
      /** Pins or unpins, archives or restores; undefined when the session is gone. */
      setState: (id: string, state: { readonly pinned?: boolean | undefined; readonly archived?: boolean | undefined }) =>
        sessionRows(
          sql`UPDATE sessions SET
                pinned_at = CASE WHEN ${state.pinned ?? null}::boolean IS NULL THEN pinned_at
                                 WHEN ${state.pinned ?? null}::boolean THEN coalesce(pinned_at, now()) END,
                archived_at = CASE WHEN ${state.archived ?? null}::boolean IS NULL THEN archived_at
                                   WHEN ${state.archived ?? null}::boolean THEN coalesce(archived_at, now()) END
              WHERE id = ${id} RETURNING ${sql.literal(sessionColumns)}`
        ).pipe(Effect.map(firstRow)),
      /**
       * Sessions whose title or user and assistant messages match `text` (full text, 'simple'; a
       * title also by substring, for a word half typed), each with the words around its first
       * matching message. `owner` set: only that owner's.
       */
      search: (text: string, filter: { readonly owner?: string; readonly limit: number }) =>
        sql`WITH q AS (SELECT websearch_to_tsquery('simple', ${text}) AS query)
          SELECT ${sql.literal(sessionColumns)},
            (SELECT ts_headline('simple', m.content, q.query, 'MaxWords=24, MinWords=8, StartSel="", StopSel=""')
             FROM messages m
             WHERE m.session_id = sessions.id AND m.role IN ('user', 'assistant')
               AND to_tsvector('simple', coalesce(m.content, '')) @@ q.query
             ORDER BY m.seq LIMIT 1) AS snippet
          FROM sessions, q
          WHERE (${filter.owner ?? null}::text IS NULL OR owner = ${filter.owner ?? null})
            AND (to_tsvector('simple', coalesce(title, '')) @@ q.query
              OR position(lower(${text}) IN lower(coalesce(title, ''))) > 0
              OR EXISTS (SELECT 1 FROM messages m
                         WHERE m.session_id = sessions.id AND m.role IN ('user', 'assistant')
                           AND to_tsvector('simple', coalesce(m.content, '')) @@ q.query))
          ORDER BY pinned_at IS NULL, updated_at DESC LIMIT ${filter.limit}`.pipe(matchRows),
      setBot: (id: string, botId: string) =>
        sessionRows(
          sql`UPDATE sessions SET bot_id = ${botId}, updated_at = now() WHERE id = ${id} RETURNING ${sql.literal(sessionColumns)}`
        ).pipe(
          Effect.map(firstRow)
        ),
      /**
       * Stores a summary of the messages from `from` through `through` (seqs) as the session's next
       * version, and as its current one unless a newer summary already covers more. Undefined when
       * the session is gone.
       */
      setSummary: (id: string, summary: string, from: number, through: number, trigger: string) =>
        sql`WITH current AS (
              UPDATE sessions SET summary = ${summary}, summary_through = ${through}
              WHERE id = ${id} AND coalesce(summary_through, 0) <= ${through} RETURNING id
            )
            INSERT INTO session_summaries (session_id, version, summary, from_seq, through_seq, trigger)
            SELECT s.id, coalesce((SELECT max(version) FROM session_summaries WHERE session_id = s.id), 0) + 1,
                   ${summary}, ${from}, ${through}, ${trigger}
            FROM sessions s WHERE s.id = ${id}
            ON CONFLICT (session_id, version) DO NOTHING
            RETURNING version, summary, from_seq::int AS from_seq, through_seq::int AS through_seq, trigger, created_at`.pipe(
          decodeRows(SummaryRow),
          Effect.map(firstRow)
        ),
      currentSummary: (id: string) =>
        sql`SELECT summary, coalesce(summary_through, 0)::int AS through FROM sessions WHERE id = ${id}`.pipe(
          decodeRows(Schema.Struct({ summary: Schema.NullOr(Schema.String), through: Schema.Number })),
          Effect.map(firstRow)
        ),
      /** The session's summaries, oldest first. */
      summaries: (id: string) =>
        sql`SELECT version, summary, from_seq::int AS from_seq, through_seq::int AS through_seq, trigger, created_at
            FROM session_summaries WHERE session_id = ${id} ORDER BY version`.pipe(decodeRows(SummaryRow)),
      /** The messages in a seq range, with what a summary needs of them. */
      transcript: (sessionId: string, range: { readonly after?: number; readonly through?: number } = {}) =>
        sql`SELECT seq::int AS seq, role, content, coalesce((metadata->>'passive')::boolean, false) AS passive,
                   metadata->>'tool_name' AS tool_name
            FROM messages WHERE session_id = ${sessionId}
              AND seq > ${range.after ?? 0} AND seq <= ${range.through ?? Number.MAX_SAFE_INTEGER}
            ORDER BY seq`.pipe(decodeRows(TranscriptRow)),
      setTitle: (id: string, title: string) =>
        sessionRows(sql`UPDATE sessions SET title = ${title} WHERE id = ${id} RETURNING ${sql.literal(sessionColumns)}`).pipe(
          Effect.map(firstRow)
        ),
      // Its documents (dropped into the chat) go with it; a bot's notes carry no attachment.
      remove: (id: string) =>
        Effect.map(
          sql`WITH gone AS (DELETE FROM sessions WHERE id = ${id} RETURNING id), documents_gone AS (DELETE FROM documents
            WHERE session_id IN (SELECT id FROM gone) AND metadata->>'attachment_id' IS NOT NULL) SELECT id FROM gone`,
          (rows) => rows.length === 1
        ),
      messages: (sessionId: string) =>
        sql`SELECT ${sql.literal(messageColumns)} FROM messages WHERE session_id = ${sessionId} ORDER BY seq`.pipe(
          decodeRows(MessageRow)
        ),
      /** The newest `limit` messages, oldest first (only those are read). */
      latestMessages: (sessionId: string, limit: number) =>
        sql`SELECT ${sql.literal(messageColumns)} FROM messages WHERE session_id = ${sessionId} ORDER BY seq DESC LIMIT ${limit}`.pipe(
          decodeRows(MessageRow),
          Effect.map((rows) => [...rows].reverse())
        ),
      /**
       * The newest messages after the session's summary with seq above `after` (at most `limit`,
       * oldest first), with only what context assembly reads, and with the summary and how many
       * messages the session holds, all in one statement (see History.ts). Undefined when the
       * session is gone.
       */
      historySince: (sessionId: string, read: { readonly after: number }, limit: number) =>
        rows(sql`SELECT coalesce(s.summary_through, 0)::int AS through, s.summary, s.message_count::int AS total,
                   m.seq::int AS seq, m.passive, m.role, m.content, m.tool_calls, m.tool_call_id, m.cancelled, m.attachments,
                   m.provider_state, m.origin
            FROM sessions s
            LEFT JOIN LATERAL (
              SELECT m.seq, coalesce((m.metadata->>'passive')::boolean, false) AS passive, m.role, m.content, m.tool_calls, m.tool_call_id,
                     coalesce((m.metadata->>'cancelled')::boolean, false) AS cancelled,
                     CASE WHEN m.attachments = '[]'::jsonb THEN NULL ELSE m.attachments END AS attachments,
                     m.metadata->'provider_state' AS provider_state, m.metadata->'origin' AS origin
              FROM messages m
              WHERE m.session_id = s.id AND m.seq > greatest(${read.after}, coalesce(s.summary_through, 0))
              ORDER BY m.seq DESC LIMIT ${limit}
            ) m ON true
            WHERE s.id = ${sessionId}
            ORDER BY m.seq`).pipe(
          decodeRows(HistorySliceRow),
          Effect.map((found): HistorySlice | undefined => {
            const first = found[0]
            if (first === undefined) return undefined
            const rows: Array<HistoryRow & { readonly seq: number }> = []
            for (const row of found) {
              if (row.seq === null || row.role === null) continue
              rows.push({
                seq: row.seq,
                passive: row.passive ?? false,
                role: row.role,
                content: row.content,
                tool_calls: row.tool_calls,
                tool_call_id: row.tool_call_id,
                cancelled: row.cancelled ?? false,
                attachments: row.attachments,
                summary: row.summary,
                ...(row.provider_state ? { provider_state: row.provider_state } : {}),
                ...(row.origin ? { origin: row.origin } : {})
              })
            }
            return { through: first.through, summary: first.summary, total: first.total, rows }
          })
        ),
      /**
       * The writes that store a message, for another statement to carry (db/Commit.ts); `gate` as
       * `messageWrites`. `stored` gets what storing it answered, once that statement commits.
       */
      appendWrites: (
        sessionId: string,
        message: NewMessage,
        stored: (report: StoredMessage | null) => void,
        gate?: string
      ): CarriedWrites => {
        const writes = messageWrites(randomUUID(), sessionId, message, gate)
        return { parts: writes.parts, report: { value: writes.stored, take: (value) => stored(decodeStored(value)) } }
      },
      /** A run's message, stored only while its run runs (its row held FOR SHARE: a close elsewhere waits or shuts it out); null if not. */
      appendForRun: (sessionId: string, message: NewMessage, runId: string, relaxed = false) => {
        const writes = messageWrites(randomUUID(), sessionId, message, runGate)
        const statement = sql`WITH ${sql(runGate)} AS (SELECT id FROM runs WHERE id = ${runId} AND status = 'running' FOR SHARE),
          ${withParts(sql, writes.parts)} SELECT ${writes.stored} AS stored${sql.literal(relaxed ? ` FROM ${relaxedFromItem}` : "")}`
        return Effect.map(decodeRows(Stored)(rows(statement)), (found) => decodeStored(found[0]?.stored))
      },
      /**
       * One statement: the message and its session's activity time and count commit together;
       * `relaxed`, that commit does not wait for the disk (db/Commit.ts). Answers the message and
       * what storing it answered.
       */
      append: (sessionId: string, message: NewMessage, relaxed = false) =>
        Effect.suspend(() => {
          const id = randomUUID()
          const writes = messageWrites(id, sessionId, message)
          // Only the time comes back: the rest of the row is what was sent (no JSON read back).
          return Effect.map(
            decodeRows(Inserted)(
              rows(sql`WITH ${withParts(sql, writes.parts)}
                SELECT created_at, ${writes.stored} AS stored FROM message_row${sql.literal(relaxedJoin(relaxed))}`)
            ),
            (rows) => ({
              row: {
                id,
                session_id: sessionId,
                role: message.role,
                content: message.content,
                tool_calls: message.tool_calls ?? null,
                tool_call_id: message.tool_call_id ?? null,
                attachments: message.attachments ?? [],
                metadata: message.metadata ?? {},
                created_at: rows[0]!.created_at
              } satisfies MessageRow,
              stored: decodeStored(rows[0]!.stored)
            })
          )
        })
    })
  })
}) {}
