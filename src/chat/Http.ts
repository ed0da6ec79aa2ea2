import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { approvalNotFound, toolRequestNotFound } from "../agent/Errors.ts"
import type { SequencedEvent } from "../agent/Events.ts"
import { Interactions } from "../agent/Interactions.ts"
import { CairnApi } from "../Api.ts"
import { Principal, type PrincipalShape } from "../auth/Principal.ts"
import { Intake, type IntakeStart, sessionBusy } from "../intake/Intake.ts"
import * as Sse from "../runs/Sse.ts"
import { confinedBot, decidesEveryApproval, ownerOf } from "../sessions/Access.ts"
import { Sessions } from "../sessions/Sessions.ts"
import { Acknowledged, ApprovalDecision, ApprovalView, CancelResponse, ChatResponse, SessionSummary, SummaryVersion } from "./Model.ts"
import { Summaries } from "./Summaries.ts"

export const ChatHttpLive = HttpApiBuilder.group(CairnApi, "chat", (handlers) =>
  Effect.gen(function*() {
    const chat = yield* Intake
    const interactions = yield* Interactions
    const summaries = yield* Summaries
    const sessions = yield* Sessions
    /**
     * What a run waits on (an approval, a client tool's answer) is answered only by a caller that
     * reaches the run's session; to any other it does not exist, as an unknown id does not. A request
     * a previous release opened names no session (null).
     */
    const withinReach = <E>(principal: PrincipalShape, sessionId: string | null, notFound: E) =>
      sessionId === null ? Effect.void : sessions.reach(principal, sessionId).pipe(
        Effect.asVoid,
        Effect.catchTags({ SessionNotFound: () => Effect.fail(notFound), Forbidden: () => Effect.fail(notFound) })
      )

    const decide = (id: string, approved: boolean) =>
      Effect.gen(function*() {
        const principal = yield* Principal
        if (!decidesEveryApproval(principal)) {
          const sessionId = yield* interactions.approvalSession(id)
          yield* withinReach(principal, sessionId, approvalNotFound(id))
        }
        return new ApprovalDecision(yield* interactions.decide(id, approved))
      })

    /** What a voice message said comes first, before whatever else the answer streams. */
    const heard = (started: IntakeStart): ReadonlyArray<SequencedEvent["event"]> =>
      started.transcript === null ? [] : [{ type: "transcript", text: started.transcript }]

    return handlers
      .handle("chat", ({ payload }) =>
        Effect.flatMap(Principal, (principal) => chat.answer(payload, principal)).pipe(
          Effect.map(
            (answer) =>
              new ChatResponse({
                session_id: answer.sessionId,
                response: answer.text,
                transcript: answer.transcript,
                client_actions: answer.clientActions
              })
          )
        ))
      .handle("stream", ({ payload }) =>
        Effect.gen(function*() {
          const principal = yield* Principal
          const started = yield* chat.begin(payload, principal)
          switch (started._tag) {
            case "passive":
              return yield* Sse.response(
                Sse.fixed(...heard(started), { type: "passive_stored", session_id: started.sessionId }),
                started.sessionId
              )
            case "queued":
              return yield* Sse.response(
                chat.followTask([...heard(started), {
                  type: "queued",
                  session_id: started.sessionId,
                  task_id: started.taskId,
                  reason: started.reason
                }], started.taskId),
                started.sessionId
              )
            case "busy":
              return yield* sessionBusy(started.reason)
            case "unheard":
              return yield* Sse.response(
                Sse.fixed(...heard(started), ...Sse.endedWithError(started.message, started.sessionId)),
                started.sessionId
              )
            case "started":
              return yield* Sse.response(yield* chat.follow(started, principal), started.sessionId)
          }
        }))
      .handle("cancel", ({ payload }) =>
        Effect.flatMap(Principal, (principal) => chat.cancel(payload, principal)).pipe(
          Effect.map((result) => new CancelResponse(result))
        ))
      .handle("toolResult", ({ payload }) =>
        Effect.gen(function*() {
          const sessionId = yield* interactions.toolRequestSession(payload.request_id)
          yield* withinReach(yield* Principal, sessionId, toolRequestNotFound(payload.request_id))
          const result = typeof payload.result === "string" ? payload.result : JSON.stringify(payload.result)
          yield* interactions.submitToolResult(payload.request_id, result)
          return new Acknowledged({ ok: true })
        }))
      .handle("summarize", ({ path }) =>
        Effect.flatMap(Principal, (principal) =>
          Effect.map(summaries.summarize(principal, path.id), (summary) =>
            new SessionSummary(summary))))
      .handle("compact", ({ path }) =>
        Effect.flatMap(Principal, (principal) =>
          Effect.map(summaries.compact(principal, path.id), (row) =>
            new SummaryVersion(row))))
      .handle("summaries", ({ path }) =>
        Effect.flatMap(Principal, (principal) =>
          Effect.map(sessions.summaries(principal, path.id), (rows) =>
            rows.map((row) =>
              new SummaryVersion(row)
            ))))
      .handle("approvals", ({ urlParams }) =>
        Effect.map(
          Effect.flatMap(Principal, (principal) =>
            interactions.approvals({
              status: urlParams.status,
              sessionId: urlParams.session_id,
              // A widget token sees its own bot's approvals only, and a caller that does not decide
              // every approval sees those of the sessions it reaches: the ones it may decide.
              botId: confinedBot(principal) ?? undefined,
              owner: decidesEveryApproval(principal) ? undefined : ownerOf(principal),
              limit: urlParams.limit ?? 100
            })),
          (rows) =>
            rows.map(
              (row) =>
                new ApprovalView({
                  approval_id: row.id,
                  run_id: row.run_id,
                  session_id: row.session_id,
                  tool: row.tool_name,
                  arguments: row.arguments,
                  status: row.status,
                  reason: row.reason,
                  origins: row.origins,
                  created_at: row.created_at.toISOString(),
                  decided_at: row.decided_at?.toISOString() ?? null
                })
            )
        ))
      .handle("decide", ({ path, payload }) =>
        decide(path.id, payload.approved))
      .handle("decideApproval", ({ path, payload }) =>
        decide(path.id, payload.approved))
  }))
