/**
 * A session's recent history, read once and then only what was added since. Every turn needs the
 * newest messages after the session's summary (up to HISTORY_MESSAGES, 200); reading and decoding
 * all of them again was about a quarter of a turn's server CPU once a session had that many.
 * Messages are never edited, and a summary changes `summary_through`, so a window read earlier
 * stays true; what the cache cannot know is what another fiber or process added since.
 *
 * So each read asks for the rows after the newest one held (`after`), with how many messages the
 * session holds (`sessions.message_count`, kept by the statement that stores a message, so a read
 * sees the count and the rows of the same commits). The count when the window was read plus the
 * new rows must make it. A message whose seq is older than the newest held but which committed
 * later (seqs are taken at insert and commits can land out of order), more new rows than one read
 * takes, or any other surprise makes the count differ: the window is then read whole, as it always
 * was. (It once counted the window's rows instead: on PGlite, never vacuumed, that visited each.)
 */
import type { HistoryRow, HistorySlice } from "./Repo.ts"

/** What the statement is asked: rows with seq above `after`. */
export interface HistoryRead {
  readonly after: number
  /** The window held when the read was planned: the slice is checked against it, not whatever is held by then. */
  readonly basis?: Window | undefined
}

interface Window {
  readonly limit: number
  readonly through: number
  readonly summary: string | null
  /** How many messages the session held when the rows were read. */
  readonly total: number
  /** Oldest first, at most `limit`, each with its seq. */
  readonly rows: ReadonlyArray<HistoryRow & { readonly seq: number }>
  /** About how many characters the rows hold, for the cache's budget. */
  readonly chars: number
}

export const wholeRead: HistoryRead = { after: 0 }

/** About how many characters a row holds: its content, tool calls and attachments, and 64 for the rest. */
const charsOf = (row: HistoryRow) =>
  64 +
  (row.content?.length ?? 0) +
  (row.tool_calls && row.tool_calls.length > 0 ? JSON.stringify(row.tool_calls).length : 0) +
  (row.attachments && row.attachments.length > 0 ? JSON.stringify(row.attachments).length : 0)

const charsOfRows = (rows: ReadonlyArray<HistoryRow>) => rows.reduce((n, row) => n + charsOf(row), 0)

export interface HistoryCacheOptions {
  /** Sessions held at most (the least recently read goes first). */
  readonly sessions: number
  /** Characters held at most across all sessions; a window larger than a quarter of it is not held. */
  readonly chars: number
}

export const makeHistoryCache = (options: HistoryCacheOptions) => {
  // A Map keeps insertion order: re-inserting on each read makes its first key the least recent.
  const windows = new Map<string, Window>()
  let chars = 0

  const drop = (sessionId: string) => {
    const held = windows.get(sessionId)
    if (held === undefined) return
    windows.delete(sessionId)
    chars -= held.chars
  }

  const hold = (sessionId: string, window: Window) => {
    drop(sessionId)
    if (window.chars > options.chars / 4) return
    windows.set(sessionId, window)
    chars += window.chars
    for (const [oldest] of windows) {
      if (windows.size <= options.sessions && chars <= options.chars) break
      drop(oldest)
    }
  }

  /** What to ask the database for `sessionId`'s newest `limit` rows. */
  const plan = (sessionId: string, limit: number): HistoryRead => {
    const held = windows.get(sessionId)
    // No window to go on when nothing is asked for (HISTORY_MESSAGES=0).
    if (held === undefined || held.limit !== limit || limit <= 0) return wholeRead
    return { after: held.rows.at(-1)?.seq ?? 0, basis: held }
  }

  /**
   * The window after a statement asked as `plan` said: the rows oldest first, or undefined when the
   * slice does not square with what is held (read the window whole). `slice` undefined: no session.
   */
  const settle = (sessionId: string, limit: number, read: HistoryRead, slice: HistorySlice | undefined) => {
    if (slice === undefined) {
      drop(sessionId)
      return []
    }
    const fresh = slice.rows
    const held = read.basis
    if (held === undefined) {
      hold(sessionId, { limit, through: slice.through, summary: slice.summary, total: slice.total, rows: fresh, chars: charsOfRows(fresh) })
      return fresh
    }
    const matches =
      held.limit === limit &&
      held.through === slice.through &&
      held.summary === slice.summary &&
      slice.total === held.total + fresh.length
    if (!matches) {
      drop(sessionId)
      return undefined
    }
    if (fresh.length === 0) {
      // Held again: now the most recently read.
      hold(sessionId, held)
      return held.rows
    }
    const joined = held.rows.concat(fresh)
    const rows = joined.length > limit ? joined.slice(joined.length - limit) : joined
    const kept = rows === joined ? held.chars + charsOfRows(fresh) : charsOfRows(rows)
    hold(sessionId, { limit, through: slice.through, summary: slice.summary, total: slice.total, rows, chars: kept })
    return rows
  }

  return { plan, settle, forget: drop, size: () => windows.size, chars: () => chars }
}
