/**
 * What a lifecycle hook costs the run that fires it: `Hooks.fire` timed in batches against a
 * baseline batch of `Effect.void` in the same loop, interleaved in one run, for four set-ups:
 * nothing registered; three sync callbacks; three callbacks plus two webhook URLs on a loopback
 * receiver; three callbacks plus a webhook receiver that never answers (queue full, dropping).
 *
 *   npx tsx bench/hooks.ts [--batches N] [--batch-size N]
 *
 * Reports the median and p90 microseconds per call of each and the median added over the baseline.
 * Background work (dispatch, deliveries) shares the thread, so it shows up in the figures too.
 */
import { Context, Effect, Exit, Layer, Logger, LogLevel, Scope } from "effect"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { type HookOptions, Hooks, layerWith } from "../src/hooks/Hooks.ts"
import type { HookContext } from "../src/hooks/Model.ts"

const arg = (name: string, fallback: string) => {
  const at = process.argv.indexOf(`--${name}`)
  return at >= 0 && process.argv[at + 1] ? process.argv[at + 1]! : fallback
}
const BATCHES = Number(arg("batches", "200"))
const BATCH_SIZE = Number(arg("batch-size", "200"))
const WARMUP_BATCHES = 20

const context: HookContext<"after_tool_call"> = {
  bot_id: "default",
  session_id: "7d5c2f0e-8f0a-4c55-9a55-0d6c1c6c9a11",
  channel_id: "0b8f1a52-2c3e-4d7f-8e9a-1b2c3d4e5f60",
  client_id: "cli:bench",
  correlation_id: "corr-1",
  extra: { tool_name: "get_weather", tool_args: { city: "Oslo", units: "metric" }, duration_ms: 35 }
}

const receiver = async (hang: boolean) => {
  const open = new Set<http.ServerResponse>()
  const server = http.createServer((req, res) => {
    req.resume()
    req.on("end", () => {
      if (hang) open.add(res)
      else res.writeHead(204).end()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    close: async () => {
      for (const res of open) res.destroy()
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    }
  }
}

const build = async (options: Partial<HookOptions>, callbacks: number) => {
  const scope = Effect.runSync(Scope.make())
  const layer = layerWith(options).pipe(Layer.provide(Logger.minimumLogLevel(LogLevel.Error)))
  const hooks = Context.get(await Effect.runPromise(Layer.buildWithScope(layer, scope)), Hooks)
  let calls = 0
  for (let i = 0; i < callbacks; i++) hooks.registerHook("after_tool_call", (ctx) => void (calls += ctx.extra.duration_ms > 0 ? 1 : 0))
  return { hooks, close: () => Effect.runPromise(Scope.close(scope, Exit.void)), calls: () => calls }
}

const percentile = (sorted: ReadonlyArray<number>, p: number) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!

const main = async () => {
  const live = await receiver(false)
  const dead = await receiver(true)
  const setups = {
    "nothing registered": await build({}, 0),
    "3 sync callbacks": await build({}, 3),
    "3 callbacks + 2 webhook URLs": await build({ webhookUrls: [live.url, `${live.url}?b`] }, 3),
    "3 callbacks + hanging webhook": await build({ webhookUrls: [dead.url], webhookTimeout: 60_000 }, 3)
  }
  const kinds = ["baseline (Effect.void)", ...Object.keys(setups)] as const
  const batch = (kind: string) =>
    kind === "baseline (Effect.void)"
      ? Effect.forEach(Array.from({ length: BATCH_SIZE }), () => Effect.void, { discard: true })
      : Effect.forEach(
        Array.from({ length: BATCH_SIZE }),
        () => setups[kind as keyof typeof setups].hooks.fire("after_tool_call", context),
        { discard: true }
      )
  const samples = new Map<string, Array<number>>(kinds.map((k) => [k, []]))
  for (let round = 0; round < WARMUP_BATCHES + BATCHES; round++) {
    for (const kind of kinds) {
      const started = performance.now()
      await Effect.runPromise(batch(kind))
      const perCall = ((performance.now() - started) * 1000) / BATCH_SIZE
      if (round >= WARMUP_BATCHES) samples.get(kind)!.push(perCall)
      // Let the dispatcher and the webhook workers run between batches, as they would between run steps.
      await new Promise((resolve) => setImmediate(resolve))
    }
  }
  const baseline = percentile([...samples.get(kinds[0])!].sort((a, b) => a - b), 0.5)
  console.log(`${BATCHES} batches of ${BATCH_SIZE} calls each, after ${WARMUP_BATCHES} warm-up batches; µs per call`)
  console.log("| set-up | median µs | p90 µs | median added µs | ratio to baseline |")
  console.log("|---|---|---|---|---|")
  for (const kind of kinds) {
    const sorted = [...samples.get(kind)!].sort((a, b) => a - b)
    const median = percentile(sorted, 0.5)
    console.log(
      `| ${kind} | ${median.toFixed(2)} | ${percentile(sorted, 0.9).toFixed(2)} | ${(median - baseline).toFixed(2)} | ${
        (median / baseline).toFixed(1)
      }x |`
    )
  }
  const stats = await Effect.runPromise(setups["3 callbacks + hanging webhook"].hooks.stats)
  const liveStats = await Effect.runPromise(setups["3 callbacks + 2 webhook URLs"].hooks.stats)
  console.log(
    `live receiver: ${liveStats.webhooksDelivered} delivered, ${liveStats.webhooksDropped} dropped; ` +
      `hanging receiver: ${stats.webhooksDropped} dropped (queue bound held), callbacks run: ${setups["3 sync callbacks"].calls()}`
  )
  for (const setup of Object.values(setups)) await setup.close()
  await live.close()
  await dead.close()
}

await main()
