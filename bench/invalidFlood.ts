/**
 * How many invalid requests a second Cairn sustains while `/health` stays quick: a flood of bodies
 * of every class the edge refuses (malformed JSON, deep nesting, NUL, a lone surrogate, wrong
 * types, 10,000 bad list items, a body past the limit, a form on a JSON route, a sign-in with a
 * broken body and no credentials), at rising concurrency, with `/health` probed every 10 ms beside
 * it. The baseline, at each concurrency just before, is a flood of the cheapest valid request that
 * does real work (an authenticated settings read): the ratio says what an invalid body costs
 * against it, and the idle probe what `/health` takes alone. The server is `cairn serve` in its own
 * process, so the flood's client does not share its event loop.
 *
 *   npx tsx bench/invalidFlood.ts [pglite|postgres] [seconds per level=5]
 */
import { createTestDatabase } from "../test/support/database.ts"
import { API_KEY, spawnServer } from "../test/support/server.ts"

const backend = (process.argv[2] ?? "pglite") as "pglite" | "postgres"
const seconds = Number(process.argv[3] ?? 5)

const percentile = (values: ReadonlyArray<number>, p: number) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? NaN
}

const db = await createTestDatabase(backend)
const server = await spawnServer(db, { LOG_LEVEL: "error" })
const admin = { authorization: `Bearer ${API_KEY}` }
const jsonType = { "content-type": "application/json" }

interface Case {
  readonly name: string
  readonly path: string
  readonly headers: Record<string, string>
  readonly body: string
}
const cases: ReadonlyArray<Case> = [
  { name: "malformed JSON", path: "/api/v1/admin/bots", headers: { ...admin, ...jsonType }, body: "{\"id\": \"x\", \"name\": " },
  {
    name: "deep nesting",
    path: "/api/v1/admin/bots",
    headers: { ...admin, ...jsonType },
    body: `{"id":"x","name":${"[".repeat(10_000)}${"]".repeat(10_000)}}`
  },
  { name: "NUL", path: "/api/v1/admin/bots", headers: { ...admin, ...jsonType }, body: "{\"id\":\"x\",\"name\":\"a\\u0000b\"}" },
  { name: "lone surrogate", path: "/api/v1/admin/bots", headers: { ...admin, ...jsonType }, body: "{\"id\":\"x\",\"name\":\"a\\ud800\"}" },
  {
    name: "wrong types",
    path: "/api/v1/admin/bots",
    headers: { ...admin, ...jsonType },
    body: JSON.stringify({ id: 5, name: [], tools: {}, model: 7 })
  },
  {
    name: "2,048 bad items",
    path: "/api/v1/admin/bots",
    headers: { ...admin, ...jsonType },
    body: JSON.stringify({ id: "x", name: "n", tools: Array(2_048).fill(1) })
  },
  {
    name: "100,000 items",
    path: "/api/v1/admin/bots",
    headers: { ...admin, ...jsonType },
    body: JSON.stringify({ id: "x", name: "n", tools: Array(100_000).fill(1) })
  },
  { name: "past the limit", path: "/api/v1/admin/bots", headers: { ...admin, ...jsonType }, body: " ".repeat(1_100_000) },
  {
    name: "form on a JSON route",
    path: "/chat/cancel",
    headers: { ...admin, "content-type": "application/x-www-form-urlencoded" },
    body: "session_id=x"
  },
  { name: "sign-in, broken, no key", path: "/auth/login", headers: jsonType, body: "{\"username\": \"a\", \"password\": " }
]

const send = async (item: Case) => {
  const response = await fetch(`${server.baseUrl}${item.path}`, { method: "POST", headers: item.headers, body: item.body })
  await response.arrayBuffer()
  if (response.status >= 500) throw new Error(`${item.name}: ${response.status}`)
  return response.status
}

/** /health every 10 ms until `stop` resolves; the latencies in ms. */
const probeHealth = async (until: () => boolean) => {
  const latencies: Array<number> = []
  while (!until()) {
    const started = performance.now()
    const response = await fetch(`${server.baseUrl}/health`)
    await response.arrayBuffer()
    latencies.push(performance.now() - started)
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
  return latencies
}

/** The baseline flood: a small valid authenticated read, the cheapest request that does real work. */
const validRead: Case = { name: "valid read", path: "/api/v1/admin/settings", headers: admin, body: "" }
const sendValid = async () => {
  const response = await fetch(`${server.baseUrl}${validRead.path}`, { headers: validRead.headers })
  await response.arrayBuffer()
  if (response.status !== 200) throw new Error(`valid read: ${response.status}`)
  return response.status
}

const level = async (concurrency: number, valid = false) => {
  const deadline = Date.now() + seconds * 1000
  const over = () => Date.now() >= deadline
  const statuses = new Map<number, number>()
  let sent = 0
  const worker = async (offset: number) => {
    for (let i = offset; !over(); i++) {
      const status = valid ? await sendValid() : await send(cases[i % cases.length]!)
      statuses.set(status, (statuses.get(status) ?? 0) + 1)
      sent++
    }
  }
  const [health] = await Promise.all([probeHealth(over), ...Array.from({ length: concurrency }, (_, i) => worker(i))])
  return { concurrency, rate: sent / seconds, health, statuses }
}

// Warm up every path once (and check that none answers 5xx).
for (const item of cases) await send(item)
const idle = await probeHealth(((end) => () => Date.now() >= end)(Date.now() + seconds * 1000))
const idleP99 = percentile(idle, 0.99)
console.log(`[${backend}] ${seconds} s per level; /health probed every 10 ms`)
console.log("| flood | concurrency | requests/s | ratio to the valid flood | /health p50 ms | /health p99 ms | statuses |")
console.log("|---|---|---|---|---|---|---|")
console.log(`| none | - | 0 | - | ${percentile(idle, 0.5).toFixed(2)} | ${idleP99.toFixed(2)} | - |`)
for (const concurrency of [1, 4, 16, 64]) {
  // The valid flood first at each level, then the invalid one: the same machine state for both.
  const valid = await level(concurrency, true)
  const invalid = await level(concurrency)
  for (const [name, result] of [["valid reads", valid], ["invalid bodies", invalid]] as const) {
    const statuses = [...result.statuses.entries()].sort(([a], [b]) => a - b).map(([status, n]) => `${status}×${n}`).join(" ")
    console.log(
      `| ${name} | ${concurrency} | ${result.rate.toFixed(0)} | ${(result.rate / valid.rate).toFixed(2)} | ${
        percentile(result.health, 0.5).toFixed(2)
      } | ${percentile(result.health, 0.99).toFixed(2)} | ${statuses} |`
    )
  }
}
await server.stop()
await db.drop()
process.exit(0)
