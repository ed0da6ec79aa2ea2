/**
 * What a turn takes and gives: the loop runs one, delegation starts nested ones, the run engine
 * stores the result. In a file of their own so none of those has to import another for its types.
 */
import { Context, type Effect } from "effect"
import type { Bot, RetrievalOverride } from "../bots/Model.ts"
import type { GatedWrites } from "../db/Commit.ts"
import type { HookIds } from "../hooks/Model.ts"
import type { ToolCall, ToolSchema, Usage, UsageContext } from "../providers/Model.ts"
import type { ToolCallContext } from "../sdk/index.ts"
import type { NewMessage } from "../sessions/Model.ts"
import type { HistoryRow } from "../sessions/Repo.ts"
import type { AgentEvent } from "./Events.ts"
import { userOrigin } from "./Provenance.ts"

/** The message that stores a user's text for its run (with the run's lock, or as the turn starts). */
export const userMessage = (input: {
  readonly runId: string
  readonly text: string
  readonly attachments?: ReadonlyArray<unknown> | undefined
  readonly transcript?: string | undefined
}): NewMessage => ({
  role: "user",
  content: input.text,
  attachments: input.attachments ?? [],
  metadata: { run_id: input.runId, origin: userOrigin, ...(input.transcript !== undefined ? { voice: true } : {}) }
})

export interface ExecutionConfig {
  readonly system_preamble?: string | undefined
  readonly skills?: ReadonlyArray<string> | undefined
  readonly tools?: ReadonlyArray<string> | undefined
  readonly model_override?: string | undefined
}

export interface TurnInput {
  readonly runId: string
  readonly sessionId: string
  readonly clientId: string
  readonly bot: Bot
  readonly channel: {
    readonly id: string
    readonly name: string
    readonly model_override: string | null
    readonly workspace_enabled?: boolean
    readonly retrieval?: RetrievalOverride | null
    /** Passive messages join the session's summaries. */
    readonly passive_memory?: boolean
  } | null
  /** The user's message; null when it is already stored (a queued task's message). */
  readonly userText: string | null
  /** `userText` is stored already, with the run's lock (intake/Intake.ts): the turn only reads it. */
  readonly userStored?: boolean | undefined
  readonly attachments?: ReadonlyArray<unknown>
  /** What the voice input said: the run's first event, before anything else of the turn. */
  readonly transcript?: string | undefined
  readonly modelOverride?: string | undefined
  readonly executionConfig?: ExecutionConfig | undefined
  /** Who started the turn; `caller` is its credential (sessions' owner), the lane its model calls wait in. */
  readonly principal?:
    | { readonly kind: string; readonly id: string; readonly caller?: string; readonly user?: string | undefined }
    | undefined
  /** Reports events of the run, in order; several at once when they came together (a batch of tokens). */
  readonly emit: (...events: ReadonlyArray<AgentEvent>) => Effect.Effect<void>
  /**
   * A stateless turn's history, as the caller sent it (OpenAI's way: every request carries the
   * conversation). The turn reads it instead of the session's and stores nothing.
   */
  readonly history?: ReadonlyArray<HistoryRow>
  /**
   * Tools the caller runs itself and answers in its next request (OpenAI's way), offered beside the
   * bot's (replacing any of the same name; none the bot's policy denies). A call to one ends the
   * turn, with the calls in `TurnResult.toolCalls`. Set (even empty), it stands for the bot's own
   * client tools, which wait for `/chat/tool_result`: those are not offered.
   */
  readonly callerTools?: ReadonlyArray<ToolSchema>
  /**
   * Provider parameters for this turn's model calls, as a caller asked for them (the OpenAI
   * surface's `response_format`); each provider family maps or leaves out what it cannot take.
   */
  readonly llmExtra?: Readonly<Record<string, unknown>> | undefined
  /**
   * Where the turn's answer is delivered, as its request or task named it (dispatch type and its
   * config, possibly sealed); a delegated bot's answer is posted there too (agent/Delegation.ts).
   */
  readonly dispatch?: { readonly type: string; readonly config: Record<string, unknown> } | undefined
  /** Nested turns (delegation) do not fire after_response for the outer run. */
  readonly depth?: number
  /**
   * Hands writes to the run, which commits them in the statement that records its end (runs/Runs.ts),
   * gated on that end taking the run (still running, still this process's): the turn's answer, its
   * last write, costs no statement of its own and is never stored by a run another process closed.
   * A nested turn has none.
   */
  readonly withRunEnd?: ((writes: GatedWrites) => void) | undefined
}

export interface TurnResult {
  readonly text: string
  readonly toolsUsed: ReadonlyArray<string>
  readonly clientActions: ReadonlyArray<unknown>
  /** Calls the caller answers (see `TurnInput.callerTools`): the turn ended for them; empty otherwise. */
  readonly toolCalls: ReadonlyArray<ToolCall>
  /** The tokens of the turn's own model calls, summed (a delegated bot's are its own). */
  readonly usage: Usage
}

/**
 * Where a turn reads its history and writes its messages: the session (stored), or, for a
 * stateless turn, the history the caller sent, kept in memory for the turn's own later steps.
 */
export interface TurnRecord {
  /** Backed by a stored session: compaction and approvals need one. */
  readonly stored: boolean
  readonly recent: (limit: number) => Effect.Effect<ReadonlyArray<HistoryRow>>
  /**
   * Stores a message. `durable: false` commits relaxed (db/Commit.ts); `last`, the turn's last
   * write, goes with the run's end where the turn has one (`TurnInput.withRunEnd`).
   */
  readonly append: (message: NewMessage, options?: { readonly durable?: boolean; readonly last?: boolean }) => Effect.Effect<void>
}

/**
 * The turn being run, provided once at its start: the ids every step attributes its work to (hook
 * payloads, tool calls, usage records) are derived here, not rebuilt by each step.
 */
export interface TurnIdentity {
  readonly input: TurnInput
  readonly record: TurnRecord
  readonly hookIds: HookIds
  readonly toolContext: ToolCallContext
  readonly usage: UsageContext
}

export class CurrentTurn extends Context.Tag("cairn/CurrentTurn")<CurrentTurn, TurnIdentity>() {
  static forInput = (input: TurnInput, record: TurnRecord): TurnIdentity => {
    const channelId = input.channel?.id ?? null
    return {
      input,
      record,
      hookIds: {
        bot_id: input.bot.id,
        session_id: input.sessionId,
        channel_id: channelId,
        client_id: input.clientId,
        correlation_id: input.runId
      },
      toolContext: {
        botId: input.bot.id,
        sessionId: input.sessionId,
        channelId,
        clientId: input.clientId,
        correlationId: input.runId
      },
      usage: {
        source: "agent",
        botId: input.bot.id,
        ...(channelId ? { channelId } : {}),
        // A stateless turn belongs to no stored session.
        ...(record.stored ? { sessionId: input.sessionId } : {}),
        principalKind: input.principal?.kind,
        principalId: input.principal?.id,
        ...(input.principal?.caller ? { caller: input.principal.caller } : {}),
        ...(input.principal?.user ? { user: input.principal.user } : {})
      }
    }
  }
}
