/** Traces reach an OTLP/HTTP collector (a loopback receiver) with a span per request and per query. */
import * as http from "node:http"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type FakeLlm, fakeLlmEnv, startFakeLlm } from "../fixtures/fakeLlm.ts"
import { startServer, type TestServer } from "../support/server.ts"

interface ExportedSpan {
  readonly name: string
  readonly traceId: string
  readonly spanId: string
  readonly parentSpanId?: string
}

describe("OpenTelemetry export", () => {
  let collector: http.Server
  let server: TestServer
  let llm: FakeLlm
  const spanNames: Array<string> = []
  const spans: Array<ExportedSpan> = []

  beforeAll(async () => {
    collector = http.createServer((request, response) => {
      let body = ""
      request.on("data", (chunk) => (body += chunk))
      request.on("end", () => {
        if (request.url === "/v1/traces") {
          const payload = JSON.parse(body)
          for (const resource of payload.resourceSpans ?? []) {
            for (const scope of resource.scopeSpans ?? []) {
              for (const span of scope.spans ?? []) {
                spanNames.push(span.name)
                spans.push(span)
              }
            }
          }
        }
        response.writeHead(200, { "content-type": "application/json" }).end("{}")
      })
    })
    await new Promise<void>((resolve) => collector.listen(0, "127.0.0.1", resolve))
    const { port } = collector.address() as { port: number }
    llm = await startFakeLlm()
    server = await startServer({ backend: "pglite", env: { ...fakeLlmEnv(llm), OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}` } })
  })
  afterAll(async () => {
    await server?.close()
    await llm?.close()
    await new Promise((resolve) => collector?.close(resolve))
  })

  it("exports a request span and a SQL span", async () => {
    const response = await server.request("/api/v1/admin/settings")
    expect(response.status).toBe(200)
    const deadline = Date.now() + 15_000
    while (Date.now() < deadline && !(spanNames.some((n) => n.startsWith("http.server")) && spanNames.some((n) => n.startsWith("sql")))) {
      await new Promise((resolve) => setTimeout(resolve, 200))
    }
    expect(spanNames.some((name) => name.startsWith("http.server"))).toBe(true)
    expect(spanNames.some((name) => name.startsWith("sql"))).toBe(true)
  })

  it("exports a span per service method and per repository method", async () => {
    const response = await server.request("/api/v1/admin/channels", {
      method: "POST",
      body: JSON.stringify({ name: "traced-channel", bot_id: "default" })
    })
    expect(response.status).toBeLessThan(300)
    const wanted = ["Channels.create", "ChannelsRepo.insert"]
    const deadline = Date.now() + 15_000
    while (Date.now() < deadline && !wanted.every((name) => spanNames.includes(name))) {
      await new Promise((resolve) => setTimeout(resolve, 200))
    }
    expect(spanNames).toEqual(expect.arrayContaining(wanted))
  })

  it("puts a turn's spans in the trace of the request that started it, though its run outlives the request", async () => {
    const response = await server.request("/chat/stream", {
      method: "POST",
      body: JSON.stringify({ message: "Hi", client_id: "traced-turn" })
    })
    expect(response.status).toBe(200)
    expect(await response.text()).toContain("\"type\":\"response\"")
    const deadline = Date.now() + 15_000
    const named = (name: string) => spans.find((span) => span.name === name)
    while (Date.now() < deadline && !(named("AgentLoop.runTurn") && named("Intake.begin"))) {
      await new Promise((resolve) => setTimeout(resolve, 200))
    }
    const turn = named("AgentLoop.runTurn")!
    const begin = named("Intake.begin")!
    expect(turn).toBeDefined()
    expect(turn.traceId).toBe(begin.traceId)
    // Up the turn's parents, the request's own span.
    const byId = new Map(spans.map((span) => [span.spanId, span]))
    const ancestors: Array<string> = []
    for (let at = byId.get(turn.parentSpanId ?? ""); at; at = byId.get(at.parentSpanId ?? "")) ancestors.push(at.name)
    expect(ancestors.some((name) => name.startsWith("http.server"))).toBe(true)
  })

  it("makes one span per operation: none runs inside a span of its own name", async () => {
    // A proxied completion: `Llm.complete` once made its own span inside the one `traced` gives it.
    const response = await server.request("/api/v1/llm/completions", {
      method: "POST",
      body: JSON.stringify({ messages: [{ role: "user", content: "hello there" }] })
    })
    expect(response.status).toBe(200)
    const deadline = Date.now() + 15_000
    while (Date.now() < deadline && !spanNames.includes("Llm.complete")) await new Promise((resolve) => setTimeout(resolve, 200))
    expect(spanNames).toContain("Llm.complete")
    const byId = new Map(spans.map((span) => [span.spanId, span]))
    const doubled = spans.filter((span) => byId.get(span.parentSpanId ?? "")?.name === span.name).map((span) => span.name)
    expect(doubled).toEqual([])
  })
})
