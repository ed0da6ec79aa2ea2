/**
 * What a run waits on from outside: a client-side tool's result, or a human's approval.
 *
 * Approvals live in the database (a decision may arrive at another server process; the waiting
 * run polls it, with an in-process fast path). Client tool results are held in memory: the client
 * answers the process whose stream asked, and an unknown id is a 404.
 */
import { SqlClient } from "@effect/sql"
import { Deferred, Duration, Effect, Option, Schedule } from "effect"
import { randomUUID } from "node:crypto"
import { Conflict, NotFound } from "../http/Errors.ts"

export class Interactions extends Effect.Service<Interactions>()("cairn/Interactions", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const toolResults = new Map<string, Deferred.Deferred<string>>()
    const decisions = new Map<string, Deferred.Deferred<boolean>>()

    /** Waits for the client's answer; None after the timeout. */
    const awaitToolResult = (requestId: string, timeout: Duration.DurationInput) =>
      Effect.gen(function* () {
        const deferred = yield* Deferred.make<string>()
        toolResults.set(requestId, deferred)
        return yield* Deferred.await(deferred).pipe(Effect.timeoutOption(timeout))
      }).pipe(Effect.ensuring(Effect.sync(() => toolResults.delete(requestId))))

    const submitToolResult = (requestId: string, result: string) =>
      Effect.gen(function* () {
        const deferred = toolResults.get(requestId)
        if (!deferred) return yield* new NotFound({ detail: `No pending tool request: ${requestId}` })
        yield* Deferred.succeed(deferred, result)
      })

    const createApproval = (input: { runId: string; sessionId: string; toolName: string; args: unknown }) =>
      Effect.gen(function* () {
        const id = randomUUID()
        yield* sql`INSERT INTO approvals (id, run_id, session_id, tool_name, arguments)
                   VALUES (${id}, ${input.runId}, ${input.sessionId}, ${input.toolName}, ${JSON.stringify(input.args ?? {})}::jsonb)`
        return id
      })

    const readDecision = (id: string) =>
      Effect.map(
        sql<{ status: string }>`SELECT status FROM approvals WHERE id = ${id}`,
        (rows) => (rows[0]?.status === "approved" ? Option.some(true) : rows[0]?.status === "denied" ? Option.some(false) : Option.none())
      )

    /** The decision, or denial when nobody decides within the timeout (the approval expires). */
    const awaitDecision = (id: string, timeout: Duration.DurationInput) =>
      Effect.gen(function* () {
        const local = yield* Deferred.make<boolean>()
        decisions.set(id, local)
        const polled = readDecision(id).pipe(
          Effect.flatMap((decision) => (Option.isSome(decision) ? Effect.succeed(decision.value) : Effect.fail("pending" as const))),
          Effect.retry({ schedule: Schedule.spaced(Duration.millis(250)), while: (error) => error === "pending" }),
          Effect.catchIf((error): error is "pending" => error === "pending", () => Effect.never)
        )
        const decided = yield* Effect.raceFirst(Deferred.await(local), polled).pipe(Effect.timeoutOption(timeout))
        if (Option.isNone(decided)) {
          const expired = yield* sql<{ id: string }>`UPDATE approvals SET status = 'expired', decided_at = now()
                                                     WHERE id = ${id} AND status = 'pending' RETURNING id`
          // A decision that landed just before the expiry wins: the caller was told it counted.
          if (expired.length === 0) return Option.getOrElse(yield* readDecision(id), () => false)
          return false
        }
        return decided.value
      }).pipe(Effect.ensuring(Effect.sync(() => decisions.delete(id))))

    const decide = (id: string, approved: boolean) =>
      Effect.gen(function* () {
        const uuid = /^[0-9a-f-]{36}$/i.test(id) ? id : "00000000-0000-0000-0000-000000000000"
        const rows = yield* sql<{ id: string }>`UPDATE approvals SET status = ${approved ? "approved" : "denied"}, decided_at = now()
                                                WHERE id = ${uuid} AND status = 'pending' RETURNING id`
        if (rows.length === 0) {
          const existing = yield* sql<{ status: string }>`SELECT status FROM approvals WHERE id = ${uuid}`
          if (existing.length === 0) return yield* new NotFound({ detail: `Approval not found: ${id}` })
          return yield* new Conflict({ detail: `Approval already ${existing[0]!.status}` })
        }
        const local = decisions.get(id)
        if (local) yield* Deferred.succeed(local, approved)
        return { approval_id: id, approved }
      })

    return { awaitToolResult, submitToolResult, createApproval, awaitDecision, decide } as const
  })
}) {}
