/**
 * The two places a turn's conversation lives (`TurnRecord`): a stored session, or the history a
 * stateless caller sent, held in memory for the turn's own later steps and then dropped.
 */
import { Effect } from "effect"
import type { GatedWrites } from "../db/Commit.ts"
import type { HistoryRow } from "../sessions/Repo.ts"
import type { Sessions } from "../sessions/Sessions.ts"
import type { TurnRecord } from "./Turn.ts"

/**
 * A stored session's record for run `runId`. Fenced: a message is stored only while the run is
 * running (`Sessions.appendForRun`); one another process closed (its heartbeat stopped: a
 * partition, a pause) stores nothing more, its dropped write logged. `withRunEnd`: the run that
 * commits the turn's last write (its answer, or the partial answer of a run stopped before it) with
 * its end, gated on that end (`TurnInput.withRunEnd`); one write rides with it, the first.
 */
export const sessionRecord = (
  sessions: Sessions,
  sessionId: string,
  runId: string,
  withRunEnd?: (writes: GatedWrites) => void
): TurnRecord => {
  let carried = false
  return {
    stored: true,
    recent: (limit) => sessions.recent(sessionId, limit),
    append: (message, options) =>
      options?.last && withRunEnd
        ? Effect.sync(() => {
          if (carried) return
          carried = true
          withRunEnd((gate) => sessions.appendWrites(sessionId, message, gate))
        })
        : Effect.flatMap(
          sessions.appendForRun(sessionId, message, runId, options),
          (stored) =>
            stored ? Effect.void : Effect.logWarning(`Run ${runId} was closed by another process; its ${message.role} message was dropped`)
        )
  }
}

export const memoryRecord = (history: ReadonlyArray<HistoryRow>): TurnRecord => {
  const rows: Array<HistoryRow> = [...history]
  return {
    stored: false,
    recent: (limit) => Effect.sync(() => rows.slice(-limit)),
    append: (message) =>
      Effect.sync(() => {
        rows.push({
          role: message.role,
          content: message.content,
          tool_calls: message.tool_calls ?? null,
          tool_call_id: message.tool_call_id ?? null,
          cancelled: message.metadata?.cancelled === true,
          attachments: message.attachments && message.attachments.length > 0 ? message.attachments : null,
          ...(message.metadata?.provider_state ? { provider_state: message.metadata.provider_state } : {}),
          ...(message.metadata?.origin ? { origin: message.metadata.origin } : {})
        })
      })
  }
}
