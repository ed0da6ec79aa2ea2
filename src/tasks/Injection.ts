/**
 * Injected messages: a message put into a session from outside a chat (an integration, a
 * scheduler, another task's result), stored as a user message and, when asked, answered by a
 * background task that runs the turn on the stored message.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { Interactions } from "../agent/Interactions.ts"
import { injectionOrigin } from "../agent/Provenance.ts"
import { transactions } from "../db/Repository.ts"
import { Sessions } from "../sessions/Sessions.ts"
import { traced } from "../telemetry/Spans.ts"
import type { ExecutionConfig, InjectMessage } from "./Model.ts"
import { Tasks } from "./Tasks.ts"

export interface Injection {
  readonly content: string
  readonly source: string
  readonly runAgent: boolean
  readonly notify: boolean
  readonly executionConfig?: ExecutionConfig | undefined
  /** Where the result goes; only used with `notify` (the caller resolves the session's default). */
  readonly dispatchType?: string | undefined
  readonly dispatchConfig?: Record<string, unknown> | undefined
  readonly extraMetadata?: Record<string, unknown> | undefined
  /** Stored with the message (images the model sees with it). */
  readonly attachments?: ReadonlyArray<unknown> | undefined
  /** The inbound item (src/inbound) the run answers, carried on its task. */
  readonly inboundId?: string | undefined
}

/** An injection as the API's request body gives it. */
export const injectionOf = (payload: InjectMessage): Injection => ({
  content: payload.content,
  source: payload.source,
  runAgent: payload.run_agent,
  notify: payload.notify,
  executionConfig: payload.execution_config,
  dispatchType: payload.dispatch_type,
  dispatchConfig: payload.dispatch_config
})

/**
 * Where a notified result goes when the request names no dispatch_type: the session's
 * dispatch_config, whose `dispatch_type` (or `type`) field names the dispatcher and whose other
 * fields are its config. None named: nobody is told (dispatch_type none).
 */
export const sessionDispatch = (config: Record<string, unknown>): { type: string; config: Record<string, unknown> } => {
  const { dispatch_type, type, ...rest } = config
  const named = typeof dispatch_type === "string" ? dispatch_type : typeof type === "string" ? type : "none"
  return { type: named, config: named === "none" ? {} : rest }
}

export class Injector extends Effect.Service<Injector>()("cairn/Injector", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const transaction = transactions(sql)
    const sessions = yield* Sessions
    const tasks = yield* Tasks
    const interactions = yield* Interactions

    /** Stores the message and, with `runAgent`, queues its task; both or neither. */
    const inject = (sessionId: string, injection: Injection) =>
      Effect.gen(function*() {
        const session = yield* sessions.get(sessionId)
        const fallback = sessionDispatch(session.dispatch_config)
        const dispatchType = injection.notify ? (injection.dispatchType ?? fallback.type) : "none"
        const dispatchConfig = injection.notify
          ? injection.dispatchType
            ? (injection.dispatchConfig ?? {})
            : fallback.config
          : {}
        const origin = injectionOrigin(injection.source, injection.extraMetadata)
        // The account owner's reply in a chat an integration brings in (the bridge) decides the
        // approvals announced there (tasks/ApprovalNotice.ts); a stranger's never does.
        const answered = origin.kind === "user" && injection.source.startsWith("integration:")
          ? yield* interactions.answerInChat(session.id, injection.content)
          : []
        return yield* transaction(
          Effect.gen(function*() {
            const message = yield* sessions.append(session.id, {
              role: "user",
              content: injection.content,
              ...(injection.attachments?.length ? { attachments: injection.attachments } : {}),
              metadata: {
                ...injection.extraMetadata,
                source: injection.source,
                injected: true,
                origin,
                ...(answered.length > 0 ? { approval_answer: answered } : {})
              }
            })
            if (!injection.runAgent) return { message_id: message.id, session_id: session.id, task_id: null }
            const task = yield* tasks.enqueue({
              source: injection.source,
              botId: session.bot_id,
              sessionId: session.id,
              channelId: session.channel_id,
              clientId: session.client_id,
              prompt: injection.content,
              promptStored: true,
              dispatchType,
              dispatchConfig,
              executionConfig: (injection.executionConfig ?? {}) as Record<string, unknown>,
              inboundId: injection.inboundId ?? null
            })
            return { message_id: message.id, session_id: session.id, task_id: task.id as string | null }
          })
        )
      })

    return traced("Injector", { inject } as const)
  }),
  dependencies: [Interactions.Default, Sessions.Default, Tasks.Default]
}) {}
