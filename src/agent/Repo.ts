/**
 * SQL for approvals: a tool call a run waits on until a person decides (possibly through another
 * server process). Rows are decoded with schemas; a database failure is a defect here.
 */
import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Option, Schema } from "effect"
import { decodeRows, IdRow, repository } from "../db/Repository.ts"
import { ApprovalReason } from "./Events.ts"
import type { Origin } from "./Provenance.ts"

export const ApprovalStatus = Schema.Literal("pending", "approved", "denied", "expired")
export type ApprovalStatus = typeof ApprovalStatus.Type

const StatusRow = Schema.Struct({ status: ApprovalStatus })
const SessionRow = Schema.Struct({ session_id: Schema.String })

export const ApprovalRow = Schema.Struct({
  id: Schema.String,
  run_id: Schema.String,
  session_id: Schema.String,
  tool_name: Schema.String,
  arguments: Schema.Unknown,
  status: ApprovalStatus,
  reason: ApprovalReason,
  origins: Schema.Unknown,
  created_at: Schema.DateFromSelf,
  decided_at: Schema.NullOr(Schema.DateFromSelf)
})

export class ApprovalsRepo extends Effect.Service<ApprovalsRepo>()("cairn/ApprovalsRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const status = SqlSchema.findOne({
      Request: Schema.String,
      Result: StatusRow,
      execute: (id) => sql`SELECT status FROM approvals WHERE id = ${id}`
    })
    const expire = SqlSchema.findOne({
      Request: Schema.String,
      Result: IdRow,
      execute: (id) => sql`UPDATE approvals SET status = 'expired', decided_at = now() WHERE id = ${id} AND status = 'pending' RETURNING id`
    })
    const decide = SqlSchema.findOne({
      Request: Schema.Struct({ id: Schema.String, status: Schema.Literal("approved", "denied") }),
      Result: IdRow,
      execute: ({ id, status }) =>
        sql`UPDATE approvals SET status = ${status}, decided_at = now() WHERE id = ${id} AND status = 'pending' RETURNING id`
    })
    const adopt = SqlSchema.findOne({
      Request: Schema.Struct({ runId: Schema.String, sessionId: Schema.String, toolName: Schema.String, args: Schema.Unknown }),
      Result: IdRow,
      execute: ({ args, runId, sessionId, toolName }) =>
        sql`UPDATE approvals SET run_id = ${runId}
            WHERE id = (SELECT id FROM approvals
                        WHERE session_id = ${sessionId} AND tool_name = ${toolName} AND status = 'pending'
                          AND arguments = ${JSON.stringify(args ?? {})}::jsonb
                        ORDER BY created_at DESC LIMIT 1)
              AND status = 'pending'
            RETURNING id`
    })
    const sessionOf = SqlSchema.findOne({
      Request: Schema.String,
      Result: SessionRow,
      execute: (id) => sql`SELECT session_id FROM approvals WHERE id = ${id}`
    })
    const claimNotice = SqlSchema.findOne({
      Request: Schema.String,
      Result: IdRow,
      execute: (id) => sql`UPDATE approvals SET notified_at = now() WHERE id = ${id} AND notified_at IS NULL RETURNING id`
    })
    const rows = decodeRows(ApprovalRow)
    return repository("ApprovalsRepo", {
      /** Approvals, newest first; by default the pending ones. */
      list: (
        filter: {
          readonly status?: ApprovalStatus | undefined
          readonly sessionId?: string | undefined
          /** Only this bot's (a widget token sees its own bot's only). */
          readonly botId?: string | undefined
          /** Only those of the sessions this owner made (a caller that does not decide every approval). */
          readonly owner?: string | undefined
          readonly limit: number
        }
      ) =>
        rows(sql`SELECT id, run_id, session_id, tool_name, arguments, status, reason, origins, created_at, decided_at FROM approvals
                 WHERE status = ${filter.status ?? "pending"}
                   AND (${filter.sessionId ?? null}::uuid IS NULL OR session_id = ${filter.sessionId ?? null}::uuid)
                   AND (${filter.botId ?? null}::text IS NULL OR bot_id = ${filter.botId ?? null}::text)
                   AND (${filter.owner ?? null}::text IS NULL
                        OR session_id IN (SELECT id FROM sessions WHERE owner = ${filter.owner ?? null}::text))
                 ORDER BY created_at DESC LIMIT ${filter.limit}`),
      insert: (
        input: {
          readonly id: string
          readonly runId: string
          readonly sessionId: string
          readonly toolName: string
          readonly args: unknown
          readonly reason: ApprovalReason
          readonly origins: ReadonlyArray<Origin>
          readonly botId: string
        }
      ) =>
        sql`INSERT INTO approvals (id, run_id, session_id, tool_name, arguments, reason, origins, bot_id)
            VALUES (${input.id}, ${input.runId}, ${input.sessionId}, ${input.toolName}, ${JSON.stringify(input.args ?? {})}::jsonb,
                    ${input.reason}, ${JSON.stringify(input.origins)}::jsonb, ${input.botId})`.pipe(
          Effect.asVoid
        ),
      /**
       * Takes over a pending approval of the same call (session, tool, arguments) that an earlier run
       * left behind (the server restarted while it waited; a session runs one run at a time, so no
       * other run waits on it): the person deciding it in the inbox decides for the run asking now.
       */
      adopt: (input: { readonly runId: string; readonly sessionId: string; readonly toolName: string; readonly args: unknown }) =>
        Effect.map(
          adopt(input),
          Option.map((row) => row.id)
        ),
      /** Marks the approval told to where its run came from; false when it was already. */
      claimNotice: (id: string) => Effect.map(claimNotice(id), Option.isSome),
      /** The session whose run waits on the approval; None when there is no such approval. */
      sessionOf: (id: string) => Effect.map(sessionOf(id), Option.map((row) => row.session_id)),
      /** The approval's status; None when there is no such approval. */
      status: (id: string) => Effect.map(status(id), Option.map((row) => row.status)),
      /** Expires a pending approval; false when it was no longer pending. */
      expire: (id: string) => Effect.map(expire(id), Option.isSome),
      /** Records a decision on a pending approval; false when it was not pending (or does not exist). */
      decide: (id: string, approved: boolean) => Effect.map(decide({ id, status: approved ? "approved" : "denied" }), Option.isSome)
    })
  })
}) {}

const ResultRow = Schema.Struct({ result: Schema.NullOr(Schema.String) })
const PendingRow = Schema.Struct({ session_id: Schema.NullOr(Schema.String) })

/**
 * SQL for client-side tool requests: open while the run waits, answered by whichever process the
 * client's `/chat/tool_result` reaches.
 */
export class ClientToolsRepo extends Effect.Service<ClientToolsRepo>()("cairn/ClientToolsRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const answer = SqlSchema.findOne({
      Request: Schema.Struct({ id: Schema.String, result: Schema.String }),
      Result: IdRow,
      execute: ({ id, result }) =>
        sql`UPDATE client_tool_requests SET result = ${result}, answered_at = now()
            WHERE id = ${id} AND result IS NULL RETURNING id`
    })
    const result = SqlSchema.findOne({
      Request: Schema.String,
      Result: ResultRow,
      execute: (id) => sql`SELECT result FROM client_tool_requests WHERE id = ${id}`
    })
    const pending = SqlSchema.findOne({
      Request: Schema.String,
      Result: PendingRow,
      execute: (id) => sql`SELECT session_id FROM client_tool_requests WHERE id = ${id} AND result IS NULL`
    })
    return repository("ClientToolsRepo", {
      /** Opens a request of a session's run (and drops those a stopped process left behind a day ago). */
      open: (id: string, sessionId: string) =>
        sql`DELETE FROM client_tool_requests WHERE created_at < now() - interval '1 day'`.pipe(
          Effect.zipRight(sql`INSERT INTO client_tool_requests (id, session_id) VALUES (${id}, ${sessionId})`),
          Effect.asVoid
        ),
      /** An unanswered request's session (null for one a previous release opened); None when none waits. */
      pendingSession: (id: string) => Effect.map(pending(id), Option.map((row) => row.session_id)),
      /** Records the client's answer; false when the request is unknown or already answered. */
      answer: (id: string, value: string) => Effect.map(answer({ id, result: value }), Option.isSome),
      /** The answer, when there is one. */
      result: (id: string) => Effect.map(result(id), Option.flatMap((row) => Option.fromNullable(row.result))),
      close: (id: string) => Effect.asVoid(sql`DELETE FROM client_tool_requests WHERE id = ${id}`)
    })
  })
}) {}
