/**
 * What a run waits on from outside: a client-side tool's result, or a human's approval.
 *
 * Approvals live in the database (a decision may arrive at another server process; the waiting
 * run polls it, with an in-process fast path). Client tool results are held in memory: the client
 * answers the process whose stream asked, and an unknown id is a 404.
 */
import { Deferred, Duration, Effect, Option, Schedule } from "effect"
import { isUuid } from "../contract/Params.ts"
import { randomUUID } from "node:crypto"
import { ApprovalsRepo } from "./Repo.ts"
import { maskArguments } from "../secrets/Patterns.ts"
import { ApprovalDecided, ApprovalNotFound, ToolRequestNotFound } from "./Errors.ts"

/** A waiting run looks for a decision made in another process every 250 ms until there is one. */
const decisionPoll = Schedule.recurUntil<Option.Option<boolean>>(Option.isSome).pipe(Schedule.addDelay(() => Duration.millis(250)))

export class Interactions extends Effect.Service<Interactions>()("cairn/Interactions", {
  effect: Effect.gen(function* () {
    const repo = yield* ApprovalsRepo
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
        if (!deferred) return yield* new ToolRequestNotFound({ detail: `No pending tool request: ${requestId}` })
        yield* Deferred.succeed(deferred, result)
      })

    const createApproval = (input: { runId: string; sessionId: string; toolName: string; args: unknown }) =>
      Effect.gen(function* () {
        const id = randomUUID()
        yield* repo.insert({ id, ...input })
        return id
      })

    const readDecision = (id: string) =>
      Effect.map(repo.status(id), (status) =>
        Option.isSome(status) && (status.value === "approved" || status.value === "denied")
          ? Option.some(status.value === "approved")
          : Option.none()
      )

    /** The decision, or denial when nobody decides within the timeout (the approval expires). */
    const awaitDecision = (id: string, timeout: Duration.DurationInput) =>
      Effect.gen(function* () {
        const local = yield* Deferred.make<boolean>()
        decisions.set(id, local)
        // Read now, then on the poll's cadence until a decision is there.
        const polled = Effect.map(Effect.repeat(readDecision(id), decisionPoll), Option.getOrThrow)
        const decided = yield* Effect.raceFirst(Deferred.await(local), polled).pipe(Effect.timeoutOption(timeout))
        if (Option.isNone(decided)) {
          // A decision that landed just before the expiry wins: the caller was told it counted.
          if (!(yield* repo.expire(id))) return Option.getOrElse(yield* readDecision(id), () => false)
          return false
        }
        return decided.value
      }).pipe(Effect.ensuring(Effect.sync(() => decisions.delete(id))))

    const decide = (id: string, approved: boolean) =>
      Effect.gen(function* () {
        const uuid = isUuid(id) ? id : "00000000-0000-0000-0000-000000000000"
        if (!(yield* repo.decide(uuid, approved))) {
          const existing = yield* repo.status(uuid)
          if (Option.isNone(existing)) return yield* new ApprovalNotFound({ detail: `Approval not found: ${id}` })
          return yield* new ApprovalDecided({ detail: `Approval already ${existing.value}` })
        }
        const local = decisions.get(id)
        if (local) yield* Deferred.succeed(local, approved)
        return { approval_id: id, approved }
      })

    /** What waits for a person (or was decided), with secret-looking arguments masked as in the audit. */
    const approvals = (filter: Parameters<typeof repo.list>[0]) =>
      Effect.map(repo.list(filter), (rows) => rows.map((row) => ({ ...row, arguments: maskArguments(row.arguments) })))

    return {
      approvals: Effect.fn("Interactions.approvals")(approvals),
      awaitToolResult: Effect.fn("Interactions.awaitToolResult")(awaitToolResult),
      submitToolResult: Effect.fn("Interactions.submitToolResult")(submitToolResult),
      createApproval: Effect.fn("Interactions.createApproval")(createApproval),
      awaitDecision: Effect.fn("Interactions.awaitDecision")(awaitDecision),
      decide: Effect.fn("Interactions.decide")(decide)
    } as const
  }),
  dependencies: [ApprovalsRepo.Default]
}) {}
