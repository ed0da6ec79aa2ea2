/**
 * `GET /metrics`: Prometheus text after real traffic (a chat through the fake LLM, a stream, a 404,
 * a request refused), parsed as the exposition format; behind `operations:read` on the API port and
 * without a credential on METRICS_PORT.
 */
import * as net from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type FakeLlm, fakeLlmEnv, startFakeLlm } from "../fixtures/fakeLlm.ts"
import { backends } from "../support/database.ts"
import { startServer, type TestServer } from "../support/server.ts"

interface Sample {
  readonly name: string
  readonly labels: Record<string, string>
  readonly value: number
}

/** The exposition format's samples; every line is a comment (`# HELP`, `# TYPE`) or a sample. */
const parse = (text: string) => {
  const samples: Array<Sample> = []
  const types = new Map<string, string>()
  for (const line of text.split("\n")) {
    if (line.length === 0) continue
    const type = /^# TYPE (\S+) (counter|gauge|histogram|summary|untyped)$/.exec(line)
    if (type) types.set(type[1]!, type[2]!)
    if (line.startsWith("#")) continue
    const sample = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line)
    if (!sample) throw new Error(`Not a sample line: ${line}`)
    const labels: Record<string, string> = {}
    for (const [, key, value] of (sample[2] ?? "").matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[key!] = value!
    samples.push({ name: sample[1]!, labels, value: Number(sample[3]) })
  }
  return { samples, types }
}

const freePort = () =>
  new Promise<number>((resolve) => {
    const probe = net.createServer().listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as net.AddressInfo
      probe.close(() => resolve(port))
    })
  })

/**
 * Metrics are the process's (Effect's registry): a server started before in this test file counted
 * too, so a test compares counts with a scrape taken before its traffic.
 */
const total = (samples: ReadonlyArray<Sample>, name: string, labels: Record<string, string> = {}) =>
  find(samples, name, labels).reduce((sum, s) => sum + s.value, 0)

const find = (samples: ReadonlyArray<Sample>, name: string, labels: Record<string, string> = {}) =>
  samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))

describe.each(backends)("metrics (%s)", (backend) => {
  let server: TestServer
  let llm: FakeLlm
  let metricsPort: number

  beforeAll(async () => {
    llm = await startFakeLlm()
    metricsPort = await freePort()
    server = await startServer({ backend, env: { ...fakeLlmEnv(llm), METRICS_PORT: String(metricsPort) } })
  })
  afterAll(async () => {
    await server?.close()
    await llm?.close()
  })

  it("counts requests, errors, durations, provider calls and the levels, in the exposition format", async () => {
    const before = parse(await (await server.request("/metrics")).text()).samples
    const grew = (after: ReadonlyArray<Sample>, name: string, labels: Record<string, string> = {}) =>
      total(after, name, labels) - total(before, name, labels)
    llm.script({ text: "Hello there" })
    const chat = await server.request("/chat", { method: "POST", body: JSON.stringify({ message: "Hi" }) })
    expect(chat.status).toBe(200)
    const { session_id } = await chat.json() as { session_id: string }
    for (let i = 0; i < 3; i++) expect((await server.request(`/api/v1/sessions/${session_id}/messages`)).status).toBe(200)
    expect((await server.request("/api/v1/no-such-route")).status).toBe(404)
    expect((await server.request("/api/v1/admin/bots", { auth: null })).status).toBe(401)

    const response = await server.request("/metrics")
    expect(response.status).toBe(200)
    expect(response.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/)
    const { samples, types } = parse(await response.text())

    expect(types.get("cairn_http_requests_total")).toBe("counter")
    expect(types.get("cairn_http_request_duration_seconds")).toBe("histogram")
    // A route is its pattern, never the URL with its id.
    expect(find(samples, "cairn_http_requests_total", { method: "GET", route: "/api/v1/sessions/:id/messages", status: "200" }))
      .toHaveLength(1)
    expect(grew(samples, "cairn_http_requests_total", { method: "GET", route: "/api/v1/sessions/:id/messages", status: "200" })).toBe(3)
    expect(samples.some((s) => s.labels.route?.includes(session_id))).toBe(false)
    expect(grew(samples, "cairn_http_requests_total", { method: "POST", route: "/chat", status: "200" })).toBe(1)
    expect(grew(samples, "cairn_http_requests_total", { route: "other", status: "404" })).toBe(1)
    expect(grew(samples, "cairn_http_requests_total", { route: "/api/v1/admin/bots", status: "401" })).toBe(1)
    expect(grew(samples, "cairn_http_request_duration_seconds_count", { route: "/api/v1/sessions/:id/messages" })).toBe(3)
    expect(grew(samples, "cairn_http_request_duration_seconds_bucket", { route: "/api/v1/sessions/:id/messages", le: "+Inf" })).toBe(3)

    expect(grew(samples, "cairn_provider_calls_total", { outcome: "ok" })).toBeGreaterThanOrEqual(1)
    expect(find(samples, "cairn_provider_call_duration_seconds_count").length).toBeGreaterThanOrEqual(1)

    for (const name of ["cairn_runs_running", "cairn_runs_queued", "cairn_tasks", "cairn_tasks_oldest_pending_age_seconds"]) {
      expect(find(samples, name).length, name).toBeGreaterThanOrEqual(1)
    }
    expect(find(samples, "cairn_runs_running", { scope: "process" })[0]?.value).toBe(0)
    expect(find(samples, "cairn_event_loop_delay_seconds", { quantile: "0.99" })[0]?.value).toBeGreaterThanOrEqual(0)
    expect(find(samples, "cairn_process_resident_memory_bytes")[0]?.value).toBeGreaterThan(10_000_000)
    if (backend === "postgres") {
      expect(find(samples, "cairn_db_pool_connections", { state: "total" })[0]?.value).toBeGreaterThanOrEqual(1)
      expect(find(samples, "cairn_db_pool_max_connections")[0]?.value).toBeGreaterThanOrEqual(1)
    }
  })

  it("counts a stream while it is open", async () => {
    llm.script({ text: "one two three four five six", chunkDelayMs: 300 })
    const controller = new AbortController()
    const stream = await server.request("/chat/stream", {
      method: "POST",
      body: JSON.stringify({ message: "Go" }),
      signal: controller.signal
    })
    expect(stream.status).toBe(200)
    const open = parse(await (await server.request("/metrics")).text()).samples
    expect(find(open, "cairn_streams_open")[0]?.value).toBeGreaterThanOrEqual(1)
    await stream.text()
    const deadline = Date.now() + 10_000
    let after = 1
    while (Date.now() < deadline && after !== 0) {
      after = find(parse(await (await server.request("/metrics")).text()).samples, "cairn_streams_open")[0]?.value ?? -1
      if (after !== 0) await new Promise((resolve) => setTimeout(resolve, 100))
    }
    expect(after).toBe(0)
  })

  it("needs operations:read on the API, and nothing on METRICS_PORT", async () => {
    expect((await server.request("/metrics", { auth: null })).status).toBe(401)
    const own = await fetch(`http://127.0.0.1:${metricsPort}/metrics`)
    expect(own.status).toBe(200)
    expect(own.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/)
    const { samples } = parse(await own.text())
    expect(find(samples, "cairn_http_requests_total").length).toBeGreaterThan(0)
    expect((await fetch(`http://127.0.0.1:${metricsPort}/metrics`, { method: "POST" })).status).toBe(405)
  })
})
