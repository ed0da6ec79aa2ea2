/** Starting an agent turn as a run: the one path both live chat and the task worker take. */
import { Effect } from "effect"
import type { RunSlot } from "../access/RunSlots.ts"
import { AgentLoop } from "../agent/Loop.ts"
import type { TurnInput } from "../agent/Turn.ts"
import type { RetrievalOverride } from "../bots/Model.ts"
import { Journal } from "../logs/Journal.ts"
import { traced } from "../telemetry/Spans.ts"
import { Runs } from "./Runs.ts"

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

/**
 * A turn to start: the turn's own input, less what the run supplies when it starts it (the event
 * sink, the write carried into the run's end) and what only a stateless or nested turn has.
 */
export interface TurnStart extends
  Pick<
    TurnInput,
    | "runId"
    | "sessionId"
    | "clientId"
    | "bot"
    | "channel"
    | "userText"
    | "userStored"
    | "attachments"
    | "transcript"
    | "modelOverride"
    | "executionConfig"
    | "principal"
    | "callerTools"
    | "dispatch"
  >
{
  /** The credential's place the run holds until it ends (`Runs.reserve`). */
  readonly slot?: RunSlot | undefined
}

export class Turns extends Effect.Service<Turns>()("cairn/Turns", {
  effect: Effect.gen(function*() {
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
            attributes: {
              channel_id: turn.channel?.id ?? null,
              client_id: turn.clientId,
              ...(turn.transcript !== undefined ? { voice: true } : {})
            }
          },
          loop.runTurn({ ...turn, emit, withRunEnd: carry }),
          (result) => ({ attributes: { response_chars: result.text.length, client_actions: result.clientActions.length } })
        ), slot)
    return traced("Turns", { start } as const)
  }),
  dependencies: [AgentLoop.Default, Journal.Default, Runs.Default]
}) {}
