/** Traces reach an OTLP/HTTP collector (a loopback receiver) with a span per request and per query. */
import * as http from "node:http"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startServer, type TestServer } from "../support/server.ts"

describe("OpenTelemetry export", () => {
  let collector: http.Server
  let server: TestServer
  const spanNames: Array<string> = []

  beforeAll(async () => {
    collector = http.createServer((request, response) => {
      let body = ""
      request.on("data", (chunk) => (body += chunk))
      request.on("end", () => {
        if (request.url === "/v1/traces") {
          const payload = JSON.parse(body)
          for (const resource of payload.resourceSpans ?? []) {
            for (const scope of resource.scopeSpans ?? []) {
              for (const span of scope.spans ?? []) spanNames.push(span.name)
            }
          }
        }
        response.writeHead(200, { "content-type": "application/json" }).end("{}")
      })
    })
    await new Promise<void>((resolve) => collector.listen(0, "127.0.0.1", resolve))
    const { port } = collector.address() as { port: number }
    server = await startServer({ backend: "pglite", env: { OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}` } })
  })
  afterAll(async () => {
    await server?.close()
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
})
