/**
 * What decoding rows with their schema costs (`decodeRows` in db/Repository.ts), on the hottest
 * read: the history a turn assembles its context from (up to HISTORY_MESSAGES rows, default 200),
 * against the same rows taken as they come (a cast). Median of interleaved rounds, per call.
 *
 *   npx tsx bench/rows.ts [rows=200] [rounds=15]
 */
import { Effect } from "effect"
import { decodeRows } from "../src/db/Repository.ts"
import { HistoryRow } from "../src/sessions/Repo.ts"

const count = Number(process.argv[2] ?? 200)
const rounds = Number(process.argv[3] ?? 15)
const calls = 200

const rows: ReadonlyArray<unknown> = Array.from({ length: count }, (_, i) =>
  i % 3 === 2
    ? { role: "tool", content: `result ${i}`, tool_calls: null, tool_call_id: `call_${i}`, cancelled: false }
    : i % 3 === 1
    ? {
      role: "assistant",
      content: null,
      tool_calls: [{ id: `call_${i}`, type: "function", function: { name: "f", arguments: "{}" } }],
      tool_call_id: null,
      cancelled: false
    }
    : { role: "user", content: `question ${i} `.repeat(20), tool_calls: null, tool_call_id: null, cancelled: false })
const query = Effect.succeed(rows)
const cast = query as Effect.Effect<ReadonlyArray<typeof HistoryRow.Type>>
const decoded = query.pipe(decodeRows(HistoryRow))

const time = (effect: Effect.Effect<ReadonlyArray<unknown>, unknown>) => {
  const started = process.hrtime.bigint()
  for (let i = 0; i < calls; i++) Effect.runSync(effect)
  return Number(process.hrtime.bigint() - started) / calls / 1000
}
const samples = { cast: [] as Array<number>, decoded: [] as Array<number> }
for (let round = 0; round < rounds; round++) {
  samples.cast.push(time(cast))
  samples.decoded.push(time(decoded))
}
const median = (xs: Array<number>) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
const c = median(samples.cast)
const d = median(samples.decoded)
console.log(
  `${count} history rows: cast ${c.toFixed(1)} µs, decoded ${d.toFixed(1)} µs per read (+${(d - c).toFixed(1)} µs, ${
    ((d - c) / count).toFixed(2)
  } µs a row)`
)
