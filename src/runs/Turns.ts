/** Starting an agent turn as a run: the one path both live chat and the task worker take. */
import { Effect } from "effect"
import { AgentLoop } from "../agent/Loop.ts"
import type { ExecutionConfig, TurnInput } from "../agent/Turn.ts"
import type { Bot, RetrievalOverride } from "../bots/Model.ts"
import { Journal } from "../logs/Journal.ts"
import type { RunSlot } from "./Quota.ts"
import { Runs } from "./Runs.ts"
import { traced } from "../telemetry/Spans.ts"

/** The channel as a turn sees it. */
export const turnChannel = (channel: {
  readonly id: string
  readonly name: string
  readonly model_override: string | null
  readonly workspace_enabled: boolean
  readonly retrieval?: RetrievalOverride | null
  readonly passive_memory?: boolean
}): NonNullable<TurnInput["channel"]> => ({
  id: channel.id,
  name: channel.name,
  model_override: channel.model_override,
  workspace_enabled: channel.workspace_enabled,
  retrieval: channel.retrieval ?? null,
  passive_memory: channel.passive_memory ?? false
})

export interface TurnStart {
  readonly runId: string
  readonly sessionId: string
  readonly clientId: string
  readonly bot: Bot
  readonly channel: TurnInput["channel"]
  readonly userText: string | null
  /** `userText` was stored with the run's lock (`Runs.acquire`). */
  readonly userStored?: boolean | undefined
  readonly attachments?: ReadonlyArray<unknown>
  readonly transcript?: string | undefined
  readonly modelOverride?: string | undefined
  readonly executionConfig?: ExecutionConfig | undefined
  readonly principal?: TurnInput["principal"]
  readonly callerTools?: TurnInput["callerTools"]
  /** The credential's place the run holds until it ends (`Runs.reserve`). */
  readonly slot?: RunSlot | undefined
}

export class Turns extends Effect.Service<Turns>()("cairn/Turns", {
  effect: Effect.gen(function* () {
    const runs = yield* Runs
    const loop = yield* AgentLoop
    const journal = yield* Journal
    const start = ({ slot, ...turn }: TurnStart) =>
      runs.start(turn.runId, turn.sessionId, (emit, carry) =>
        journal.span(
          {
            correlationId: turn.runId,
            kind: "turn",
            name: "turn",
            botId: turn.bot.id,
            sessionId: turn.sessionId,
            attributes: { channel_id: turn.channel?.id ?? null, client_id: turn.clientId, ...(turn.transcript !== undefined ? { voice: true } : {}) }
          },
          loop.runTurn({ ...turn, emit, withRunEnd: carry }),
          (result) => ({ attributes: { response_chars: result.text.length, client_actions: result.clientActions.length } })
        ),
        slot
      )
    return traced("Turns", { start } as const)
  }),
  dependencies: [AgentLoop.Default, Journal.Default, Runs.Default]
}) {}
