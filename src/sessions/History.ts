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
 *
 * A message this process stores extends the window without a read (`extend`): the statement that
 * stores it answers the session's count after it, its summary, and the newest seq before it. When
 * the count is the window's plus this one, the summary is the window's and the newest seq before it
 * is the window's newest, nothing else was stored in between, and the window plus the message is
 * the history as of that commit. The next read then needs no statement (`current`); a turn's writes
 * (its user message, its tool steps, its answer) keep it so, and a turn reads nothing. Only the one
 * read right after such a write takes it: a message stored elsewhere later is in the next read but
 * one, as it would be had it come a moment later. Any mismatch drops the window.
 */
import type { NewMessage } from "./Model.ts"
import type { HistoryRow, HistorySlice, StoredMessage } from "./Repo.ts"

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
  /** Extended by a message stored here and not read since: the next read needs no statement. */
  readonly current: boolean
}

export const wholeRead: HistoryRead = { after: 0 }

/** About how many characters a row holds: its content, tool calls and attachments, and 64 for the rest. */
const charsOf = (row: HistoryRow) =>
  64 +
  (row.content?.length ?? 0) +
  (row.tool_calls && row.tool_calls.length > 0 ? JSON.stringify(row.tool_calls).length : 0) +
  (row.attachments && row.attachments.length > 0 ? JSON.stringify(row.attachments).length : 0)

const charsOfRows = (rows: ReadonlyArray<HistoryRow>) => rows.reduce((n, row) => n + charsOf(row), 0)

type WindowRows = Window["rows"]

/**
 * The held rows with `fresh` after them, the newest `limit` kept, and their characters: counted
 * for the rows added and taken off for those dropped, not counted again for the whole window (a
 * full window of 200 rows, counted each turn, was 1.5 % of a turn's CPU).
 */
const joinRows = (held: Window, fresh: WindowRows, limit: number) => {
  const joined = held.rows.concat(fresh)
  const dropped = Math.max(0, joined.length - limit)
  // `held.chars` is its rows' sum, so what is dropped (held rows first) comes off it exactly.
  return {
    rows: dropped === 0 ? joined : joined.slice(dropped),
    chars: held.chars + charsOfRows(fresh) - charsOfRows(joined.slice(0, dropped))
  }
}

/** A metadata flag as the history read takes it (`coalesce((metadata->>'flag')::boolean, false)`); undefined when not a plain boolean. */
const flagOf = (value: unknown) => (value === undefined || value === null ? false : typeof value === "boolean" ? value : undefined)

/**
 * A message as the history read would answer it, stored at `seq` under `summary`; undefined when
 * a flag is not a plain boolean (only the database's reading of it is then certain).
 */
export const historyRowOf = (
  message: NewMessage,
  seq: number,
  summary: string | null
): (HistoryRow & { readonly seq: number }) | undefined => {
  const passive = flagOf(message.metadata?.passive)
  const cancelled = flagOf(message.metadata?.cancelled)
  if (passive === undefined || cancelled === undefined) return undefined
  return {
    seq,
    passive,
    role: message.role,
    content: message.content,
    tool_calls: message.tool_calls ?? null,
    tool_call_id: message.tool_call_id ?? null,
    cancelled,
    attachments: message.attachments && message.attachments.length > 0 ? message.attachments : null,
    summary,
    ...(message.metadata?.provider_state ? { provider_state: message.metadata.provider_state } : {}),
    ...(message.metadata?.origin ? { origin: message.metadata.origin } : {})
  }
}

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

  /** The window held for `sessionId` at `limit`; none to go on when nothing is asked for (HISTORY_MESSAGES=0). */
  const usable = (sessionId: string, limit: number) => {
    const held = windows.get(sessionId)
    return held !== undefined && held.limit === limit && limit > 0 ? held : undefined
  }

  /**
   * The window, when a message stored here extended it since it was last read (and it is taken
   * for this read only); undefined when the database must be asked (`plan`).
   */
  const current = (sessionId: string, limit: number) => {
    const held = usable(sessionId, limit)
    if (held === undefined || !held.current) return undefined
    hold(sessionId, { ...held, current: false })
    return held.rows
  }

  /**
   * A message stored here, with what storing it answered: the window gains it when nothing else
   * changed since the window (see above), and is dropped otherwise.
   */
  const extend = (sessionId: string, message: NewMessage, stored: StoredMessage) => {
    const held = windows.get(sessionId)
    if (held === undefined) return
    const row = historyRowOf(message, stored.seq, stored.summary)
    const matches = row !== undefined &&
      stored.total === held.total + 1 &&
      stored.through === held.through &&
      stored.summary === held.summary &&
      stored.before === (held.rows.at(-1)?.seq ?? 0) &&
      stored.seq > stored.before
    if (!matches) return drop(sessionId)
    const { rows, chars: kept } = joinRows(held, [row], held.limit)
    hold(sessionId, { ...held, total: stored.total, rows, chars: kept, current: true })
  }

  /** What to ask the database for `sessionId`'s newest `limit` rows. */
  const plan = (sessionId: string, limit: number): HistoryRead => {
    const held = usable(sessionId, limit)
    if (held === undefined) return wholeRead
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
      hold(sessionId, {
        limit,
        through: slice.through,
        summary: slice.summary,
        total: slice.total,
        rows: fresh,
        chars: charsOfRows(fresh),
        current: false
      })
      return fresh
    }
    const matches = held.limit === limit &&
      held.through === slice.through &&
      held.summary === slice.summary &&
      slice.total === held.total + fresh.length
    if (!matches) {
      drop(sessionId)
      return undefined
    }
    if (fresh.length === 0) {
      // Held again: now the most recently read.
      hold(sessionId, held.current ? { ...held, current: false } : held)
      return held.rows
    }
    const { rows, chars: kept } = joinRows(held, fresh, limit)
    hold(sessionId, { limit, through: slice.through, summary: slice.summary, total: slice.total, rows, chars: kept, current: false })
    return rows
  }

  return { current, extend, plan, settle, forget: drop, size: () => windows.size, chars: () => chars }
}
