/**
 * Scaling out: chat turns per second with 200 concurrent sessions through a round-robin proxy in
 * front of 1, 2 and 3 `cairn serve` processes on one PostgreSQL (fake LLM answering after 50 ms),
 * with each process's CPU over the window; then the notification bus's latency (NOTIFY sent by
 * one bus to delivery in another, each with its own listening connection), idle and under the
 * three-process load.
 *
 *   npx tsx bench/replicas.ts [seconds=15] [sessions=200]
 */
import { ConfigProvider, Effect, Layer, ManagedRuntime, Stream } from "effect"
import * as AppConfig from "../src/config/AppConfig.ts"
import { Bus } from "../src/db/Bus.ts"
import * as Database from "../src/db/Database.ts"
import { createTestDatabase } from "../test/support/database.ts"
import { API_KEY, type ChildServer, spawnServer } from "../test/support/server.ts"
import { startFakeLlmProcess, startProxyProcess } from "./children.ts"
import { cpuMs, loadAverage } from "./proc.ts"

const seconds = Number(process.argv[2] ?? 15)
const sessions = Number(process.argv[3] ?? 200)
const warmupSeconds = 3

const quantile = (values: Array<number>, q: number) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * q))]!
}

// The fake LLM and the proxy each run in a process of their own: in the load's process they took its
// one core and capped the turns at ~15 a second whatever the number of servers.
const llm = await startFakeLlmProcess({
  delayMs: "50",
  reply: "The quick brown fox jumps over the lazy dog",
  apiKey: "sk-bench-provider-key"
})
const env = {
  OPENAI_BASE_URL: `${llm.url}/v1`,
  OPENAI_API_KEY: "sk-bench-provider-key",
  DEFAULT_MODEL: "fake-model",
  LOG_LEVEL: "error",
  // One static key drives all 200 sessions: lift the per-credential cap past them.
  RUNS_PER_CREDENTIAL_MAX: "1000"
}
const headers = { authorization: `Bearer ${API_KEY}`, "content-type": "application/json" }

/** 200 sessions, each sending turns one after another until the window closes. */
const load = async (url: string, windowMs: number, tag: string) => {
  let turns = 0
  let failures = 0
  const until = Date.now() + windowMs
  await Promise.all(
    Array.from({ length: sessions }, async (_, i) => {
      while (Date.now() < until) {
        const response = await fetch(`${url}/chat`, {
          method: "POST",
          headers,
          body: JSON.stringify({ message: "Hi", client_id: `${tag}-${i}` })
        })
        await response.arrayBuffer()
        if (response.status === 200) turns += 1
        else failures += 1
      }
    })
  )
  return { turns, failures }
}

/** NOTIFY from one bus to delivery in another: `count` notices, one every 10 ms. */
const busLatency = async (databaseUrl: string, count: number) => {
  const busLayer = Bus.Default.pipe(
    Layer.provideMerge(Database.layer()),
    Layer.provideMerge(AppConfig.layer),
    Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map([["DATABASE_URL", databaseUrl], ["DATA_DIR", "/tmp"]]))))
  )
  const sender = ManagedRuntime.make(busLayer)
  const receiver = ManagedRuntime.make(busLayer)
  const sent = new Map<string, number>()
  const latencies: Array<number> = []
  const listening = receiver.runFork(
    Effect.flatMap(Bus, (bus) =>
      bus.changes("approval").pipe(
        Stream.runForEach((key) =>
          Effect.sync(() => {
            const at = sent.get(key)
            if (at !== undefined) latencies.push(performance.now() - at)
          })
        )
      ))
  )
  await new Promise((resolve) => setTimeout(resolve, 1000))
  const publish = await sender.runPromise(Effect.map(Bus, (bus) => bus.publish))
  for (let i = 0; i < count; i++) {
    const key = `bench-${i}`
    sent.set(key, performance.now())
    await sender.runPromise(publish("approval", key))
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
  await new Promise((resolve) => setTimeout(resolve, 500))
  await receiver.runPromise(Effect.interruptWith(listening.id())).catch(() => undefined)
  await sender.dispose()
  await receiver.dispose()
  return { delivered: latencies.length, median: quantile(latencies, 0.5), p99: quantile(latencies, 0.99) }
}

const db = await createTestDatabase("postgres")
const rows: Array<string> = []
let loadedBus: Awaited<ReturnType<typeof busLatency>> | undefined
try {
  for (const n of [1, 2, 3]) {
    const servers: Array<ChildServer> = [await spawnServer(db, env)]
    servers.push(...(await Promise.all(Array.from({ length: n - 1 }, () => spawnServer(db, env)))))
    const proxy = await startProxyProcess(servers.map((server) => server.baseUrl))
    // The load's own side, to see that it is not what limits the turns.
    const harness = [process.pid, proxy.child.pid!, llm.child.pid!]
    await load(proxy.url, warmupSeconds * 1000, `warm${n}`)
    const before = servers.map((server) => cpuMs(server.process.pid!) / 1000)
    const harnessBefore = harness.map((pid) => cpuMs(pid) / 1000)
    const started = performance.now()
    const [result, busUnderLoad] = await Promise.all([
      load(proxy.url, seconds * 1000, `n${n}`),
      n === 3 ? busLatency(db.databaseUrl!, 500) : Promise.resolve(undefined)
    ])
    const elapsed = (performance.now() - started) / 1000
    if (busUnderLoad) loadedBus = busUnderLoad
    const cpu = servers.map((server, i) => ((cpuMs(server.process.pid!) / 1000 - before[i]!) / elapsed) * 100)
    const [client, proxied, provider] = harness.map((pid, i) => ((cpuMs(pid) / 1000 - harnessBefore[i]!) / elapsed) * 100)
    const perSecond = result.turns / elapsed
    const loadAfter = loadAverage()
    rows.push(
      `| ${n} | ${perSecond.toFixed(0)} | ${result.failures} | ${cpu.map((c) => c.toFixed(0) + " %").join(", ")} | ${
        cpu.reduce((a, b) => a + b, 0).toFixed(0)
      } % | ${client!.toFixed(0)} % / ${proxied!.toFixed(0)} % / ${provider!.toFixed(0)} % | ${loadAfter} |`
    )
    console.log(rows.at(-1))
    proxy.child.kill("SIGTERM")
    for (const server of servers) await server.stop("SIGTERM")
  }
  const idleBus = await busLatency(db.databaseUrl!, 500)
  console.log(`\nChat turns per second, ${sessions} concurrent sessions, fake LLM 50 ms, ${seconds} s window:\n`)
  console.log(
    "| processes | turns/s | failed | CPU per process (% of a core) | CPU total | client / proxy / fake LLM CPU | load average after |"
  )
  console.log("|---|---|---|---|---|---|---|")
  for (const row of rows) console.log(row)
  console.log("\nBus latency, NOTIFY to delivery in another listener (500 notices, 10 ms apart):\n")
  console.log("| when | delivered | median ms | p99 ms |")
  console.log("|---|---|---|---|")
  console.log(`| idle | ${idleBus.delivered} | ${idleBus.median.toFixed(2)} | ${idleBus.p99.toFixed(2)} |`)
  if (loadedBus) {
    console.log(`| under the 3-process load | ${loadedBus.delivered} | ${loadedBus.median.toFixed(2)} | ${loadedBus.p99.toFixed(2)} |`)
  }
} finally {
  llm.child.kill("SIGTERM")
  await db.drop()
}
