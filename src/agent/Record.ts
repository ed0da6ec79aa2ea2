/**
 * The two places a turn's conversation lives (`TurnRecord`): a stored session, or the history a
 * stateless caller sent, held in memory for the turn's own later steps and then dropped.
 */
import { Effect } from "effect"
import type { CarriedWrites } from "../db/Commit.ts"
import type { HistoryRow } from "../sessions/Repo.ts"
import type { Sessions } from "../sessions/Sessions.ts"
import type { TurnRecord } from "./Turn.ts"

/** `withRunEnd`: the run that commits the turn's last write with its end (`TurnInput.withRunEnd`). */
export const sessionRecord = (sessions: Sessions, sessionId: string, withRunEnd?: (writes: CarriedWrites) => void): TurnRecord => ({
  stored: true,
  recent: (limit) => sessions.recent(sessionId, limit),
  append: (message, options) =>
    options?.last && withRunEnd
      ? Effect.sync(() => withRunEnd(sessions.appendWrites(sessionId, message)))
      : Effect.asVoid(sessions.append(sessionId, message, options))
})

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
