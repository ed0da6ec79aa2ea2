/**
 * Message intake: the one way a message goes in, whatever surface sent it (`/chat` and
 * `/chat/stream`, the OpenAI-compatible surface, MCP's `chat_with_bot`, heartbeats, integrations).
 * A message is checked and its session found (`Admission.ts`), then stored passive, queued as a
 * task (its session busy, the system paused) or run at once; a blocking caller waits for its answer
 * here.
 */
import { Effect, FiberSet, Option, Stream } from "effect"
import { overRunLimit } from "../access/RunSlots.ts"
import { isTerminal, type SequencedEvent } from "../agent/Events.ts"
import { userMessage } from "../agent/Turn.ts"
import type { PrincipalShape } from "../auth/Principal.ts"
import { Bots } from "../bots/Bots.ts"
import { Budgets } from "../budgets/Budgets.ts"
import { TooManyRequests, ValidationError } from "../contract/Errors.ts"
import { Memory } from "../health/Memory.ts"
import { userOf } from "../providers/Gate.ts"
import type { ToolSchema } from "../providers/Model.ts"
import { RunCancelled, RunFailed, RunInterrupted, SessionBusy } from "../runs/Errors.ts"
import { Runs } from "../runs/Runs.ts"
import { turnChannel, Turns } from "../runs/Turns.ts"
import { confinedBot, requireBotAllowed } from "../sessions/Access.ts"
import { Sessions } from "../sessions/Sessions.ts"
import { SystemPaused, WidgetStopOnDisconnect } from "../settings/Model.ts"
import { Settings } from "../settings/Settings.ts"
import { Dispatchers } from "../tasks/delivery/Dispatchers.ts"
import { Tasks } from "../tasks/Tasks.ts"
import { traced } from "../telemetry/Spans.ts"
import { admission, type Admitted, taskOf } from "./Admission.ts"
import { IntakeChecks } from "./Checks.ts"
import type { ChatRequest } from "./Model.ts"
import { followQueued } from "./QueuedStream.ts"
import { IntakeTarget } from "./Target.ts"
import { Voice } from "./Voice.ts"

/** How a message went in; `transcript` is what its voice said (null without voice input). */
export type IntakeStart =
  & (
    | { readonly _tag: "passive"; readonly sessionId: string }
    | { readonly _tag: "queued"; readonly sessionId: string; readonly taskId: string; readonly reason: "session_busy" | "system_paused" }
    | {
      readonly _tag: "started"
      readonly sessionId: string
      readonly runId: string
      readonly run: Effect.Effect.Success<ReturnType<Runs["start"]>>
    }
    /** The session was busy or the system paused, and the caller asked not to queue: nothing was stored. */
    | { readonly _tag: "busy"; readonly sessionId: string; readonly reason: "session_busy" | "system_paused" }
    /** Voice input in which no speech was recognised, and no other content: nothing was stored or run. */
    | { readonly _tag: "unheard"; readonly sessionId: string; readonly message: string }
  )
  & { readonly transcript: string | null }

/** What a caller other than `/chat` adds to a message (the OpenAI-compatible surface). */
export interface BeginOptions {
  /** Tools the caller answers itself: see `TurnInput.callerTools`. */
  readonly callerTools?: ReadonlyArray<ToolSchema>
  /** Provider parameters of the turn's model calls: see `TurnInput.llmExtra`. */
  readonly llmExtra?: Readonly<Record<string, unknown>>
  /** The caller's answers to the session's last tool calls, stored before the turn runs (the message may then be empty). */
  readonly toolResults?: ReadonlyArray<{ readonly tool_call_id: string; readonly content: string }>
  /** The caller's own instructions for this turn only (system messages), after the bot's prompt. */
  readonly preamble?: string
  /** A busy session or a paused system: queue the message as a task (the default), or refuse it and store nothing. */
  readonly whenBusy?: "queue" | "refuse"
}

/** A blocking turn's answer: the final text, what the voice input said ("" without one), the client actions. */
export interface IntakeAnswer {
  readonly sessionId: string
  readonly text: string
  readonly transcript: string
  readonly clientActions: ReadonlyArray<unknown>
}

type BusyReason = "session_busy" | "system_paused"

/** The 409 of a message that asked not to wait (`if_busy: reject`). */
export const sessionBusy = (reason: BusyReason) =>
  new SessionBusy({
    detail: reason === "system_paused"
      ? "The system is paused: no run starts now (send if_busy: queue to have the message queued)"
      : "The session is locked by a running turn (send if_busy: queue to have the message queued)"
  })

export class Intake extends Effect.Service<Intake>()("cairn/Intake", {
  scoped: Effect.gen(function*() {
    const admit = yield* admission
    const dispatchers = yield* Dispatchers
    // Deliveries of runs that started at once outlive the request that started them.
    const deliveries = yield* FiberSet.make()
    const sessions = yield* Sessions
    const settings = yield* Settings
    const tasks = yield* Tasks
    const runs = yield* Runs
    const turns = yield* Turns
    const checks = yield* IntakeChecks
    const target = yield* IntakeTarget
    const budgets = yield* Budgets

    /**
     * Of the caller's tool results, those the session still waits for: each must answer a call of
     * the session's last assistant message (422 otherwise, nothing stored); one already stored is
     * skipped, so a retried request stores nothing twice.
     */
    const unanswered = (sessionId: string, results: NonNullable<BeginOptions["toolResults"]>) =>
      Effect.gen(function*() {
        if (results.length === 0) return results
        const rows = yield* sessions.recent(sessionId, 200)
        const asked = rows.findLastIndex((row) => row.role === "assistant")
        const calls = new Set<string>(asked < 0 ? [] : (rows[asked]!.tool_calls ?? []).map((call: { id: string }) => call.id))
        const answered = new Set(
          rows.slice(asked + 1).flatMap((row) => (row.role === "tool" && row.tool_call_id ? [row.tool_call_id] : []))
        )
        const stray = results.find((result) => !calls.has(result.tool_call_id))
        if (stray) {
          return yield* ValidationError.single(
            ["body", "messages"],
            `The tool result for ${stray.tool_call_id} answers no tool call the session is waiting on`,
            "unknown_tool_call"
          )
        }
        return results.filter((result) => !answered.has(result.tool_call_id))
      })

    /**
     * The caller's place among its running runs (429 past the cap, before any database work), the
     * lock and the run's start, together: a start that fails gives the place and the lock back.
     * None when the session is busy.
     */
    const startRun = (message: Admitted, principal: PrincipalShape, options: BeginOptions, hasMessage: boolean) =>
      Effect.uninterruptible(
        Effect.gen(function*() {
          const { session, text, attachments, transcript } = message
          const toolResults = options.toolResults ?? []
          const slot = yield* runs.reserve(message.credential, message.maxRuns)
          if (Option.isNone(slot)) return yield* overRunLimit(message.maxRuns)
          // The user's message commits with the lock, in its statement, unless tool results the
          // caller answered go before it (stored after the lock, as the run starts).
          const userStored = hasMessage && toolResults.length === 0
          const lock = yield* runs
            .acquire(
              session.id,
              null,
              userStored
                ? (runId) => (gate) =>
                  sessions.appendWrites(session.id, userMessage({ runId, text, attachments, transcript: transcript ?? undefined }), gate)
                : undefined
            )
            .pipe(Effect.onError(() => slot.value.release))
          if (Option.isNone(lock)) {
            yield* slot.value.release
            return Option.none()
          }
          const run = yield* Effect.gen(function*() {
            for (const result of yield* unanswered(session.id, toolResults)) {
              yield* sessions.append(session.id, {
                role: "tool",
                content: result.content,
                tool_call_id: result.tool_call_id,
                metadata: { run_id: lock.value, answered_by: "caller" }
              })
            }
            return yield* turns.start({
              runId: lock.value,
              sessionId: session.id,
              clientId: session.client_id,
              bot: message.bot,
              channel: message.channel ? turnChannel(message.channel) : null,
              userText: hasMessage ? text : null,
              userStored,
              attachments,
              transcript: transcript ?? undefined,
              modelOverride: message.modelOverride,
              ...(message.request.dispatch_type
                ? { dispatch: { type: message.request.dispatch_type, config: message.request.dispatch_config ?? {} } }
                : {}),
              principal: { kind: principal.kind, id: principal.id, caller: message.credential, user: userOf(principal) },
              slot: slot.value,
              ...(options.callerTools ? { callerTools: options.callerTools } : {}),
              ...(options.llmExtra ? { llmExtra: options.llmExtra } : {}),
              ...(options.preamble ? { executionConfig: { system_preamble: options.preamble } } : {})
            })
          }).pipe(Effect.onError(() => Effect.zipRight(slot.value.release, runs.release(lock.value).pipe(Effect.ignore))))
          return Option.some({ runId: lock.value, run })
        })
      )

    /** A run started at once whose request names a dispatch: delivered exactly as a queued task's result. */
    const deliverWhenDone = (message: Admitted, runId: string, run: Effect.Effect.Success<ReturnType<Runs["start"]>>) =>
      FiberSet.run(
        deliveries,
        Effect.gen(function*() {
          const outcome = yield* runs.awaitDone(run)
          if (outcome._tag !== "complete" && outcome._tag !== "failed") return
          const taskId = yield* tasks.recordFinished(
            taskOf(message),
            outcome._tag === "complete"
              ? { status: "complete", result: outcome.result.text, error: null, clientActions: outcome.result.clientActions, runId }
              : { status: "failed", result: null, error: outcome.message, clientActions: [], runId }
          )
          yield* dispatchers.deliver(taskId)
        }).pipe(Effect.catchAllCause((cause) => Effect.logError("The result of a chat run could not be delivered", cause)))
      )

    const begin = (sent: ChatRequest, principal: PrincipalShape, options: BeginOptions = {}) =>
      Effect.gen(function*() {
        const { admitted: message, unheard } = yield* admit(sent, principal)
        const { session, transcript } = message
        if (unheard) {
          return { _tag: "unheard", sessionId: session.id, message: "No speech was recognised in the audio", transcript: "" } as const
        }
        if (message.request.passive) {
          const metadata = { passive: true, ...(transcript !== null ? { voice: true } : {}) }
          yield* sessions.append(session.id, { role: "user", content: message.text, attachments: message.attachments, metadata })
          return { _tag: "passive", sessionId: session.id, transcript } as const
        }
        const hasMessage = message.text.trim().length > 0 || message.attachments.length > 0
        if (!hasMessage && (options.toolResults ?? []).length === 0) {
          return yield* ValidationError.single(["body", "message"], "A message needs text or attachments", "missing")
        }
        // A spent budget refuses here, before anything runs or queues: a stream could not turn into a 429 later.
        yield* budgets.admit({
          principalKind: principal.kind,
          principalId: principal.id,
          user: userOf(principal),
          botId: message.bot.id,
          channelId: message.channel?.id
        })
        const queue = (reason: BusyReason) =>
          (options.whenBusy ?? (sent.if_busy === "reject" ? "refuse" : "queue")) === "refuse"
            ? Effect.succeed({ _tag: "busy", sessionId: session.id, reason, transcript } as const)
            : Effect.map(
              tasks.enqueue(taskOf(message)),
              (task) => ({ _tag: "queued", sessionId: session.id, taskId: task.id, reason, transcript }) as const
            )
        if (yield* settings.get(SystemPaused)) {
          return yield* queue("system_paused")
        }
        const started = yield* startRun(message, principal, options, hasMessage)
        if (Option.isNone(started)) {
          return yield* queue("session_busy")
        }
        const { run, runId } = started.value
        if (message.request.dispatch_type && message.request.dispatch_type !== "none") yield* deliverWhenDone(message, runId, run)
        return { _tag: "started", sessionId: session.id, runId, run, transcript } as const
      })

    /**
     * A blocking turn: the message goes in, and the answer comes back once its run (or its queued
     * task) has finished. The blocking `/chat` and MCP's `chat_with_bot` both wait through here.
     */
    const answer = (request: ChatRequest, principal: PrincipalShape) =>
      Effect.gen(function*() {
        const started = yield* begin(request, principal)
        const answered = (text: string, clientActions: ReadonlyArray<unknown>): IntakeAnswer => ({
          sessionId: started.sessionId,
          text,
          transcript: started.transcript ?? "",
          clientActions
        })
        switch (started._tag) {
          case "passive":
            return answered("", [])
          case "unheard":
            return yield* ValidationError.single(["body", "audio_data"], started.message, "empty_speech")
          case "busy":
            return yield* sessionBusy(started.reason)
          case "queued": {
            // The blocking call waits for its queued turn, so the client still gets the answer.
            const task = yield* tasks.awaitFinished(started.taskId)
            if (task.status === "complete") return answered(task.result ?? "", task.client_actions)
            if (task.status === "cancelled") return yield* new RunCancelled({ detail: "The queued message was cancelled" })
            return yield* new RunFailed({ detail: task.error ?? "The run failed" })
          }
          case "started": {
            const outcome = yield* runs.awaitDone(started.run)
            if (outcome._tag === "complete") return answered(outcome.result.text, outcome.result.clientActions)
            if (outcome._tag === "cancelled") return yield* new RunCancelled({ detail: "The run was cancelled" })
            if (outcome._tag === "interrupted") return yield* new RunInterrupted({ detail: outcome.message })
            // A budget that had room when the run started refused a later call: the 429 a first call gets.
            if (outcome.budget) {
              return yield* new TooManyRequests({ detail: outcome.message, retryAfterSeconds: outcome.budget.retryAfterSeconds })
            }
            return yield* new RunFailed({ detail: outcome.message })
          }
        }
      })

    /**
     * The events of a run `/chat/stream` started, for its client. Runs outlive their clients by
     * design; with WIDGET_STOP_ON_DISCONNECT on, a widget token's run is cancelled when its stream
     * stops before the run's end (the visitor closed the page).
     */
    const follow = (started: { readonly runId: string; readonly sessionId: string }, principal: PrincipalShape) =>
      Effect.gen(function*() {
        if (principal.kind !== "widget" || !(yield* settings.get(WidgetStopOnDisconnect))) return runs.follow(started.runId, 0)
        let ended = false
        return runs.events(started.runId, 0).pipe(
          Stream.tap((item) => Effect.sync(() => void (ended ||= isTerminal(item.event)))),
          Stream.ensuring(
            Effect.suspend(() =>
              ended
                ? Effect.void
                : runs.cancel(started.sessionId).pipe(
                  Effect.tap(() => Effect.logInfo("A widget's stream closed before its run ended; the run is cancelled")),
                  Effect.annotateLogs({ session_id: started.sessionId, run_id: started.runId }),
                  Effect.catchAllCause((cause) => Effect.logWarning("Cancelling a disconnected widget's run failed", cause))
                )
            )
          )
        )
      })

    /**
     * Cancels the addressed session's run and its queued tasks. Without a session id: the session
     * that client is talking to for that bot, the busy one (a run to stop), else the most recent;
     * none is created when there is none.
     */
    const cancel = (
      request: { client_id: string; bot_id?: string | undefined; session_id?: string | undefined },
      principal: PrincipalShape
    ) =>
      Effect.gen(function*() {
        if (request.session_id) {
          const session = yield* sessions.reach(principal, request.session_id)
          const queued = yield* tasks.cancelPending(session.id)
          return { cancelled: yield* runs.cancel(session.id), queued_tasks_cancelled: queued }
        }
        const botId = request.bot_id ?? confinedBot(principal) ?? "default"
        yield* requireBotAllowed(principal, botId)
        const candidates = yield* sessions.list(principal, { botId, clientId: request.client_id, limit: 50 })
        for (const session of candidates) {
          // Queued tasks first, so none starts in the gap the cancelled run leaves.
          const queued = yield* tasks.cancelPending(session.id)
          if (yield* runs.cancel(session.id)) return { cancelled: true, queued_tasks_cancelled: queued }
          if (queued > 0) return { cancelled: false, queued_tasks_cancelled: queued }
        }
        return { cancelled: false, queued_tasks_cancelled: 0 }
      })

    /** The events of a queued message's stream: its notice, then its task's run to the `response`. */
    const followTask = (notice: ReadonlyArray<SequencedEvent["event"]>, taskId: string) =>
      followQueued(notice, taskId, { awaitTask: tasks.awaitTask, runEvents: runs.events })

    return {
      ...traced("Intake", { begin, answer, follow, followTask, cancel } as const),
      // Their own services' spans already: passed on as they are, not wrapped in a second.
      channelSession: target.channelSession,
      checkAttachments: checks.checkAttachments,
      checkMessageLength: checks.checkMessageLength
    }
  }),
  dependencies: [
    Bots.Default,
    Budgets.Default,
    Dispatchers.Default,
    IntakeChecks.Default,
    IntakeTarget.Default,
    Memory.Default,
    Runs.Default,
    Sessions.Default,
    Settings.Default,
    Tasks.Default,
    Turns.Default,
    Voice.Default
  ]
}) {}
