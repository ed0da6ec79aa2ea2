/**
 * What a run waits on from outside: a client-side tool's result, or a human's approval.
 *
 * Both live in the database, since the answer may reach another server process than the run's
 * (behind a load balancer): the waiting run reads it again when the bus says it changed (db/Bus.ts),
 * and on the bus's slow safety poll. An unknown or already answered tool request is a 404.
 */
import { Duration, Effect, Option } from "effect"
import { randomUUID } from "node:crypto"
import { isUuid } from "../contract/Params.ts"
import { Bus } from "../db/Bus.ts"
import { maskArguments } from "../secrets/Patterns.ts"
import { traced } from "../telemetry/Spans.ts"
import { parseApprovalReply } from "./ApprovalReplies.ts"
import { ApprovalDecided, approvalNotFound, toolRequestNotFound } from "./Errors.ts"
import { storedOrigin } from "./Provenance.ts"
import { ApprovalsRepo, ClientToolsRepo } from "./Repo.ts"

export class Interactions extends Effect.Service<Interactions>()("cairn/Interactions", {
  effect: Effect.gen(function*() {
    const repo = yield* ApprovalsRepo
    const clientTools = yield* ClientToolsRepo
    const bus = yield* Bus

    /** Opens a client tool request of a session's run, before the run tells the client about it. */
    const openToolRequest = (requestId: string, sessionId: string) => clientTools.open(requestId, sessionId)

    /**
     * The session an unanswered tool request belongs to, for the caller to check it reaches that
     * session before answering; null for a request a previous release opened, which names none.
     */
    const toolRequestSession = (requestId: string) =>
      Effect.flatMap(
        isUuid(requestId) ? clientTools.pendingSession(requestId) : Effect.succeedNone,
        Option.match({
          onNone: () => toolRequestNotFound(requestId),
          onSome: Effect.succeed
        })
      )

    /** The session whose run waits on an approval, for the caller to check it reaches that session. */
    const approvalSession = (id: string) =>
      Effect.flatMap(
        isUuid(id) ? repo.sessionOf(id) : Effect.succeedNone,
        Option.match({ onNone: () => approvalNotFound(id), onSome: Effect.succeed })
      )

    /** Waits for the client's answer to an open request; None after the timeout. Closes it either way. */
    const awaitToolResult = (requestId: string, timeout: Duration.DurationInput) =>
      bus
        .awaitSome("tool_result", requestId, clientTools.result(requestId))
        .pipe(Effect.timeoutOption(timeout), Effect.ensuring(clientTools.close(requestId)))

    const submitToolResult = (requestId: string, result: string) =>
      Effect.gen(function*() {
        if (!isUuid(requestId) || !(yield* clientTools.answer(requestId, result))) {
          return yield* toolRequestNotFound(requestId)
        }
        yield* bus.publish("tool_result", requestId)
      })

    /** A new approval, or the same call's that a run stopped by a restart left pending (it survives in the inbox). */
    const createApproval = (input: Omit<Parameters<typeof repo.insert>[0], "id">) =>
      Effect.gen(function*() {
        const left = yield* repo.adopt(input)
        if (Option.isSome(left)) return left.value
        const id = randomUUID()
        yield* repo.insert({ id, ...input })
        return id
      })

    const readDecision = (id: string) =>
      Effect.map(repo.status(id), (status) =>
        Option.isSome(status) && (status.value === "approved" || status.value === "denied")
          ? Option.some(status.value === "approved")
          : Option.none())

    /** The decision, or denial when nobody decides within the timeout (the approval expires). */
    const awaitDecision = (id: string, timeout: Duration.DurationInput) =>
      Effect.gen(function*() {
        const decided = yield* bus.awaitSome("approval", id, readDecision(id)).pipe(Effect.timeoutOption(timeout))
        if (Option.isNone(decided)) {
          // A decision that landed just before the expiry wins: the caller was told it counted.
          if (!(yield* repo.expire(id))) return Option.getOrElse(yield* readDecision(id), () => false)
          return false
        }
        return decided.value
      })

    const decide = (id: string, approved: boolean) =>
      Effect.gen(function*() {
        const uuid = isUuid(id) ? id : "00000000-0000-0000-0000-000000000000"
        if (!(yield* repo.decide(uuid, approved))) {
          const existing = yield* repo.status(uuid)
          if (Option.isNone(existing)) return yield* approvalNotFound(id)
          return yield* new ApprovalDecided({ detail: `Approval already ${existing.value}` })
        }
        yield* bus.publish("approval", id)
        return { approval_id: id, approved }
      })

    /**
     * A reply in a conversation (`approve`, `deny 3f2a9c1e`) deciding what waits there; the
     * approvals it decided (none when the text is no such reply, or nothing waits). The caller
     * checks who wrote it: only the account owner's reply may decide.
     */
    const answerInChat = (sessionId: string, text: string) =>
      Effect.gen(function*() {
        const reply = parseApprovalReply(text)
        if (!reply) return []
        const pending = yield* repo.list({ sessionId, limit: 50 })
        const chosen = pending.filter((row) => reply.code === undefined || row.id.startsWith(reply.code))
        const decided: Array<{ readonly approval_id: string; readonly approved: boolean }> = []
        for (const row of chosen) {
          if (!(yield* repo.decide(row.id, reply.approved))) continue
          yield* bus.publish("approval", row.id)
          decided.push({ approval_id: row.id, approved: reply.approved })
        }
        return decided
      })

    /** Whether this process is the one to tell the run's origin of the approval (the first to ask). */
    const claimNotice = (id: string) => repo.claimNotice(id)

    /** What waits for a person (or was decided), with secret-looking arguments masked as in the audit. */
    const approvals = (filter: Parameters<typeof repo.list>[0]) =>
      Effect.map(repo.list(filter), (rows) =>
        rows.map((row) => ({
          ...row,
          arguments: maskArguments(row.arguments),
          origins: Array.isArray(row.origins) ? row.origins.flatMap((origin) => storedOrigin(origin) ?? []) : []
        })))

    return traced(
      "Interactions",
      {
        approvals,
        claimNotice,
        answerInChat,
        openToolRequest,
        toolRequestSession,
        approvalSession,
        awaitToolResult,
        submitToolResult,
        createApproval,
        awaitDecision,
        decide
      } as const
    )
  }),
  dependencies: [ApprovalsRepo.Default, ClientToolsRepo.Default, Bus.Default]
}) {}
