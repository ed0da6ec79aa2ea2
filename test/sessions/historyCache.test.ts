/**
 * The history window a process holds for each session (src/sessions/History.ts): after a whole
 * read, each read asks only for rows after the newest held, with how many messages the session
 * holds; the count at the window's read plus the rows new must make it, or the window is read
 * whole. Pure logic: the statement's answers are written here as the database would give them.
 */
import { describe, expect, it } from "vitest"
import { makeHistoryCache, wholeRead } from "../../src/sessions/History.ts"
import type { HistorySlice } from "../../src/sessions/Repo.ts"

const message = (seq: number, content = `m${seq}`, summary: string | null = null) => ({
  seq,
  passive: false,
  role: "user" as const,
  content,
  tool_calls: null,
  tool_call_id: null,
  cancelled: false,
  attachments: null,
  summary
})

/** What the statement answers for a session holding `seqs` (all after `through`), asked `read`. */
const answer = (
  seqs: ReadonlyArray<number>,
  read: { readonly after: number },
  limit: number,
  through = 0,
  summary: string | null = null
): HistorySlice => {
  // The newest `limit` of them, oldest first.
  const after = seqs.filter((seq) => seq > Math.max(read.after, through)).sort((a, b) => b - a).slice(0, limit).reverse()
  return {
    through,
    summary,
    total: seqs.length,
    rows: after.map((seq) => message(seq, `m${seq}`, summary))
  }
}

const seqsOf = (rows: ReadonlyArray<{ readonly seq?: number | undefined }> | undefined) => rows?.map((row) => row.seq)

describe("the history window a process holds", () => {
  const cache = () => makeHistoryCache({ sessions: 8, chars: 1_000_000 })

  it("reads a session whole once, then only the rows added since, checked against the session's count", () => {
    const history = cache()
    const stored = [1, 2, 3]
    expect(history.plan("s", 5)).toEqual(wholeRead)
    expect(seqsOf(history.settle("s", 5, wholeRead, answer(stored, wholeRead, 5)))).toEqual([1, 2, 3])

    stored.push(4, 5)
    const read = history.plan("s", 5)
    expect(read).toMatchObject({ after: 3 })
    expect(seqsOf(history.settle("s", 5, read, answer(stored, read, 5)))).toEqual([1, 2, 3, 4, 5])

    stored.push(6, 7)
    const next = history.plan("s", 5)
    expect(next).toMatchObject({ after: 5 })
    expect(seqsOf(history.settle("s", 5, next, answer(stored, next, 5)))).toEqual([3, 4, 5, 6, 7])

    // Nothing new: the rows held are the answer.
    const same = history.plan("s", 5)
    expect(same).toMatchObject({ after: 7 })
    expect(seqsOf(history.settle("s", 5, same, answer(stored, same, 5)))).toEqual([3, 4, 5, 6, 7])
  })

  it("reads whole again when a row committed after a newer one was read (seq inside the window)", () => {
    const history = cache()
    const stored = [1, 2, 4]
    history.settle("s", 5, wholeRead, answer(stored, wholeRead, 5))
    // Seq 3 was taken before 4 but committed after the read.
    stored.push(3, 5)
    const read = history.plan("s", 5)
    expect(history.settle("s", 5, read, answer(stored, read, 5))).toBeUndefined()
    // The window was dropped: the next read is whole, and has seq 3.
    expect(history.plan("s", 5)).toEqual(wholeRead)
    expect(seqsOf(history.settle("s", 5, wholeRead, answer(stored, wholeRead, 5)))).toEqual([1, 2, 3, 4, 5])
  })

  it("reads whole again for a late row older than a full window, which the whole read leaves out", () => {
    const history = cache()
    const stored = [10, 11, 12]
    history.settle("s", 3, wholeRead, answer(stored, wholeRead, 3))
    stored.push(5, 13)
    const read = history.plan("s", 3)
    expect(read).toMatchObject({ after: 12 })
    // Two messages more, one row new: the count does not square.
    expect(history.settle("s", 3, read, answer(stored, read, 3))).toBeUndefined()
    expect(seqsOf(history.settle("s", 3, wholeRead, answer(stored, wholeRead, 3)))).toEqual([11, 12, 13])
    // And from that whole read on, only what is new again.
    stored.push(14)
    const next = history.plan("s", 3)
    expect(seqsOf(history.settle("s", 3, next, answer(stored, next, 3)))).toEqual([12, 13, 14])
  })

  it("reads whole again when more rows arrived than one read takes", () => {
    const history = cache()
    const stored = [1, 2]
    history.settle("s", 3, wholeRead, answer(stored, wholeRead, 3))
    stored.push(3, 4, 5, 6, 7)
    const read = history.plan("s", 3)
    expect(history.settle("s", 3, read, answer(stored, read, 3))).toBeUndefined()
  })

  it("reads whole again when the summary moved", () => {
    const history = cache()
    const stored = [1, 2, 3, 4]
    history.settle("s", 5, wholeRead, answer(stored, wholeRead, 5))
    const read = history.plan("s", 5)
    expect(history.settle("s", 5, read, answer(stored, read, 5, 2, "the first two"))).toBeUndefined()
    const rows = history.settle("s", 5, wholeRead, answer(stored, wholeRead, 5, 2, "the first two"))
    expect(seqsOf(rows)).toEqual([3, 4])
    expect(rows![0]!.summary).toBe("the first two")
    // The same range summarised again in other words is a change too.
    const again = history.plan("s", 5)
    expect(history.settle("s", 5, again, answer(stored, again, 5, 2, "the first two, again"))).toBeUndefined()
  })

  it("forgets a session that is gone", () => {
    const history = cache()
    history.settle("s", 5, wholeRead, answer([1, 2], wholeRead, 5))
    const read = history.plan("s", 5)
    expect(history.settle("s", 5, read, undefined)).toEqual([])
    expect(history.size()).toBe(0)
    expect(history.plan("s", 5)).toEqual(wholeRead)
  })

  it("checks a read against the window it was planned from, not one another read held since", () => {
    const history = cache()
    const stored = [1, 2]
    history.settle("s", 5, wholeRead, answer(stored, wholeRead, 5))
    const early = history.plan("s", 5)
    stored.push(3)
    const late = history.plan("s", 5)
    expect(seqsOf(history.settle("s", 5, late, answer(stored, late, 5)))).toEqual([1, 2, 3])
    stored.push(4)
    // The early read's answer squares with its own basis (1, 2 held; 3, 4 new).
    expect(seqsOf(history.settle("s", 5, early, answer(stored, early, 5)))).toEqual([1, 2, 3, 4])
  })

  it("holds at most its sessions and characters, the least recently read going first", () => {
    const history = makeHistoryCache({ sessions: 2, chars: 4_000 })
    const read = (id: string, content: string) =>
      history.settle(id, 5, wholeRead, { through: 0, summary: null, total: 1, rows: [message(1, content)] })
    read("a", "x")
    read("b", "x")
    // Read again: now the most recent.
    const planned = history.plan("a", 5)
    history.settle("a", 5, planned, answer([1], planned, 5))
    read("c", "x")
    expect(history.size()).toBe(2)
    expect(history.plan("b", 5)).toEqual(wholeRead)
    expect(history.plan("a", 5)).not.toEqual(wholeRead)
    // A window over a quarter of the budget is not held; the rows are still answered.
    expect(read("big", "y".repeat(1_500))).toHaveLength(1)
    expect(history.plan("big", 5)).toEqual(wholeRead)
    expect(history.chars()).toBeLessThanOrEqual(4_000)
  })

  it("drops the least recently read windows past its character budget", () => {
    const history = makeHistoryCache({ sessions: 10, chars: 2_000 })
    // Each window is 400 characters of text and a row's 64: four fit, a fifth pushes out the first.
    for (const id of ["a", "b", "c", "d", "e"]) {
      history.settle(id, 5, wholeRead, { through: 0, summary: null, total: 1, rows: [message(1, "z".repeat(400))] })
    }
    expect(history.size()).toBe(4)
    expect(history.chars()).toBe(4 * 464)
    expect(history.plan("a", 5)).toEqual(wholeRead)
    expect(history.plan("e", 5)).not.toEqual(wholeRead)
  })

  it("reads whole each time when no history is asked for", () => {
    const history = cache()
    expect(history.settle("s", 0, wholeRead, answer([1, 2], wholeRead, 0))).toEqual([])
    expect(history.plan("s", 0)).toEqual(wholeRead)
  })

  it("holds a window per limit asked", () => {
    const history = cache()
    history.settle("s", 5, wholeRead, answer([1, 2], wholeRead, 5))
    expect(history.plan("s", 3)).toEqual(wholeRead)
  })

  describe("extended by a message stored here", () => {
    const stored = (seq: number, total: number, before: number, through = 0, summary: string | null = null) => ({
      seq,
      total,
      through,
      summary,
      before
    })
    const user = (content: string, metadata: Record<string, unknown> = {}) => ({ role: "user" as const, content, metadata })
    /** A window read whole over seqs 1..3 (`limit` 5). */
    const held = () => {
      const history = cache()
      history.settle("s", 5, wholeRead, answer([1, 2, 3], wholeRead, 5))
      return history
    }

    it("answers the next read without a statement, once, when nothing else was stored in between", () => {
      const history = held()
      history.extend("s", user("four"), stored(4, 4, 3))
      expect(seqsOf(history.current("s", 5))).toEqual([1, 2, 3, 4])
      expect(history.current("s", 5)?.at(-1)).toBeUndefined()
      // The read after that asks the database again, for rows after the message.
      expect(history.plan("s", 5)).toMatchObject({ after: 4 })
    })

    it("keeps the row as the database would answer it, and the window's newest `limit`", () => {
      const history = held()
      const call = { id: "c1", type: "function" as const, function: { name: "search", arguments: "{}" } }
      history.extend("s", { ...user("four", { passive: true }), attachments: [{ kind: "image" }] }, stored(4, 4, 3))
      history.extend("s", { role: "assistant", content: null, tool_calls: [call], metadata: { cancelled: false } }, stored(5, 5, 4))
      history.extend("s", user("six"), stored(6, 6, 5))
      const rows = history.current("s", 5)!
      expect(seqsOf(rows)).toEqual([2, 3, 4, 5, 6])
      expect(rows[2]).toEqual({ ...message(4, "four"), passive: true, attachments: [{ kind: "image" }] })
      expect(rows[3]).toEqual({ ...message(5, "x"), role: "assistant", content: null, tool_calls: [call] })
    })

    it("counts a window it extended past its limit as a read of the same rows would", () => {
      const extended = held()
      for (let seq = 4; seq <= 9; seq++) extended.extend("s", user(`m${seq}`), stored(seq, seq, seq - 1))
      const read = cache()
      const rows = read.settle("s", 5, wholeRead, answer([1, 2, 3, 4, 5, 6, 7, 8, 9], wholeRead, 5))
      expect(seqsOf(extended.current("s", 5))).toEqual(seqsOf(rows))
      expect(extended.chars()).toBe(read.chars())
    })

    it("drops the window when the count says another message was stored (a late commit, another process)", () => {
      const history = held()
      history.extend("s", user("five"), stored(5, 5, 3))
      expect(history.current("s", 5)).toBeUndefined()
      expect(history.plan("s", 5)).toEqual(wholeRead)
    })

    it("drops the window when a newer message was stored without being counted (a release before the count)", () => {
      const history = held()
      history.extend("s", user("five"), stored(5, 4, 4))
      expect(history.current("s", 5)).toBeUndefined()
      expect(history.plan("s", 5)).toEqual(wholeRead)
    })

    it("drops the window when the summary moved", () => {
      const history = held()
      history.extend("s", user("four"), stored(4, 4, 3, 2, "the first two"))
      expect(history.plan("s", 5)).toEqual(wholeRead)
    })

    it("drops the window for a flag the database would read otherwise than a plain boolean", () => {
      const history = held()
      history.extend("s", user("four", { passive: "yes" }), stored(4, 4, 3))
      expect(history.plan("s", 5)).toEqual(wholeRead)
    })

    it("holds nothing new for a session without a window, and answers a read of another limit from the database", () => {
      const history = held()
      history.extend("t", user("one"), stored(1, 1, 0))
      expect(history.current("t", 5)).toBeUndefined()
      history.extend("s", user("four"), stored(4, 4, 3))
      expect(history.current("s", 6)).toBeUndefined()
    })

    it("is taken by a read from the database, which the next read must make again", () => {
      const history = held()
      history.extend("s", user("four"), stored(4, 4, 3))
      const read = history.plan("s", 5)
      history.settle("s", 5, read, answer([1, 2, 3, 4], read, 5))
      expect(history.current("s", 5)).toBeUndefined()
    })
  })
})
