/**
 * SQL for approvals: a tool call a run waits on until a person decides (possibly through another
 * server process). Rows are decoded with schemas; a database failure is a defect here.
 */
import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Option, Schema } from "effect"
import { IdRow, repository } from "../db/Repository.ts"

export const ApprovalStatus = Schema.Literal("pending", "approved", "denied", "expired")
export type ApprovalStatus = typeof ApprovalStatus.Type

const StatusRow = Schema.Struct({ status: ApprovalStatus })

export class ApprovalsRepo extends Effect.Service<ApprovalsRepo>()("cairn/ApprovalsRepo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const status = SqlSchema.findOne({
      Request: Schema.String,
      Result: StatusRow,
      execute: (id) => sql`SELECT status FROM approvals WHERE id = ${id}`
    })
    const expire = SqlSchema.findOne({
      Request: Schema.String,
      Result: IdRow,
      execute: (id) =>
        sql`UPDATE approvals SET status = 'expired', decided_at = now() WHERE id = ${id} AND status = 'pending' RETURNING id`
    })
    const decide = SqlSchema.findOne({
      Request: Schema.Struct({ id: Schema.String, status: Schema.Literal("approved", "denied") }),
      Result: IdRow,
      execute: ({ id, status }) =>
        sql`UPDATE approvals SET status = ${status}, decided_at = now() WHERE id = ${id} AND status = 'pending' RETURNING id`
    })
    return repository("ApprovalsRepo", {
      insert: (input: { readonly id: string; readonly runId: string; readonly sessionId: string; readonly toolName: string; readonly args: unknown }) =>
        sql`INSERT INTO approvals (id, run_id, session_id, tool_name, arguments)
            VALUES (${input.id}, ${input.runId}, ${input.sessionId}, ${input.toolName}, ${JSON.stringify(input.args ?? {})}::jsonb)`.pipe(
          Effect.asVoid
        ),
      /** The approval's status; None when there is no such approval. */
      status: (id: string) => Effect.map(status(id), Option.map((row) => row.status)),
      /** Expires a pending approval; false when it was no longer pending. */
      expire: (id: string) => Effect.map(expire(id), Option.isSome),
      /** Records a decision on a pending approval; false when it was not pending (or does not exist). */
      decide: (id: string, approved: boolean) => Effect.map(decide({ id, status: approved ? "approved" : "denied" }), Option.isSome)
    })
  })
}) {}
