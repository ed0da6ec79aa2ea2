/**
 * What a service-method span costs when tracing is off (no OTLP endpoint), per call:
 *   plain     the method's effect alone (the baseline)
 *   withSpan  Effect.withSpan under a disabled tracer (what `traced` did before)
 *   traced    `traced(...)` today: one fiber-ref read, no span when tracing is off
 * Interleaved rounds, median per call in nanoseconds. Run: npx tsx bench/spans.ts [calls] [rounds]
 */
import { Effect } from "effect"
import { traced } from "../src/telemetry/Spans.ts"

const calls = Number(process.argv[2] ?? 100_000)
const rounds = Number(process.argv[3] ?? 7)

const method = (n: number) => Effect.succeed(n + 1)
const variants = {
  plain: method,
  withSpan: (n: number) => Effect.withSpan(method(n), "Bench.method"),
  traced: traced("Bench", { method }).method
}

const timeOne = (call: (n: number) => Effect.Effect<number>) => {
  const program = Effect.gen(function*() {
    let total = 0
    for (let i = 0; i < calls; i++) total += yield* call(i)
    return total
  }).pipe(Effect.withTracerEnabled(false))
  const started = process.hrtime.bigint()
  Effect.runSync(program)
  return Number(process.hrtime.bigint() - started) / calls
}

const samples: Record<string, Array<number>> = { plain: [], withSpan: [], traced: [] }
for (let round = 0; round < rounds; round++) {
  for (const [name, call] of Object.entries(variants)) samples[name]!.push(timeOne(call))
}
const median = (xs: Array<number>) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
const plain = median(samples.plain!)
for (const name of Object.keys(variants)) {
  const m = median(samples[name]!)
  console.log(`${name.padEnd(9)} ${m.toFixed(0).padStart(6)} ns/call  (${(m / plain).toFixed(1)}× plain, +${(m - plain).toFixed(0)} ns)`)
}
