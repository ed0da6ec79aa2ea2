/**
 * A stored dispatch or webhook URL is a credential as a whole (issue 60, item 6): URLs with tokens
 * planted in their paths and in odd parameters (a Slack incoming webhook's path, `hmac`, `k`,
 * `x-amz-signature`, userinfo) are set as a session's, a task's and a heartbeat's dispatch target
 * and as hook webhooks; one delivers, one fails, one is refused. Then every answer that shows them,
 * every log line the server wrote (and the live log tail streamed) and every span it exported (with its attributes) is scanned: none
 * holds any piece of any of them past its host. The rows hold them sealed; the receiver got them
 * in the clear; an update that sends the shown form back keeps the stored URL.
 */
import { SqlClient } from "@effect/sql"
import { ConfigProvider, Effect, Layer } from "effect"
import * as http from "node:http"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as AppConfig from "../../src/config/AppConfig.ts"
import { makeDispatchSecrets } from "../../src/secrets/DispatchConfig.ts"
import { layer as ServerSecretLive } from "../../src/secrets/ServerSecret.ts"
import { type FakeLlm, fakeLlmEnv, startFakeLlm } from "../fixtures/fakeLlm.ts"
import { startReceiver, type WebhookReceiver } from "../hooks/webhookReceiver.ts"
import { backends, createTestDatabase, type TestDatabase } from "../support/database.ts"
import { json, startServer, taskEnded, type TestServer } from "../support/server.ts"
import { waitFor } from "../support/time.ts"

/** Every planted piece: none may be seen anywhere but at the receiver and (sealed) in the rows. */
const planted = [
  "T0PLANTED1",
  "B0PLANTED2",
  "PathSecretXyz123456",
  "HmacOdd98765",
  "kOddValue5544",
  "SigAmz0909",
  "userinfoPw777",
  "hookPathTok31415",
  "hookQueryTok27182",
  "failPathTok16180",
  "refusedPathTok1414",
  "beatPathTok1732",
  "beatQueryHmac2236",
  "onlyPathSegmentZ9"
]

describe.each(backends)("webhook URLs show only their scheme and host (%s)", (backend) => {
  let db: TestDatabase
  let llm: FakeLlm
  let receiver: WebhookReceiver
  let collector: http.Server
  let server: TestServer
  const spans: Array<string> = []
  const logs: Array<string> = []
  let host = ""
  let closedPort = 0

  beforeAll(async () => {
    db = await createTestDatabase(backend)
    llm = await startFakeLlm({ defaultReply: { text: "Reported." } })
    receiver = await startReceiver({ status: 204 })
    host = receiver.url
    // A port nothing listens on: a delivery there fails with the URL in hand.
    const probe = http.createServer()
    await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve))
    closedPort = (probe.address() as { port: number }).port
    await new Promise((resolve) => probe.close(resolve))
    collector = http.createServer((request, response) => {
      let body = ""
      request.on("data", (chunk) => (body += chunk))
      request.on("end", () => {
        spans.push(body)
        response.writeHead(200, { "content-type": "application/json" }).end("{}")
      })
    })
    await new Promise<void>((resolve) => collector.listen(0, "127.0.0.1", resolve))
    const { port } = collector.address() as { port: number }
    server = await startServer({
      backend,
      db,
      onLog: (line) => logs.push(line),
      env: {
        ...fakeLlmEnv(llm),
        LOG_LEVEL: "debug",
        TASK_POLL_MS: "50",
        WEBHOOK_ALLOWED_HOSTS: "127.0.0.1",
        DISPATCH_MAX_ATTEMPTS: "1",
        OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}`,
        HOOK_WEBHOOK_URLS: [
          `${host}/hooks/hookPathTok31415?hmac=hookQueryTok27182`,
          `http://127.0.0.1:${closedPort}/x/failPathTok16180/onlyPathSegmentZ9`
        ].join(",")
      }
    })
  })
  afterAll(async () => {
    await server?.close()
    await receiver?.close()
    await llm?.close()
    await new Promise((resolve) => collector?.close(resolve))
    await db?.drop()
  })

  const slackLike = () =>
    `http://user:userinfoPw777@${
      host.slice("http://".length)
    }/services/T0PLANTED1/B0PLANTED2/PathSecretXyz123456?hmac=HmacOdd98765&k=kOddValue5544&X-Amz-Signature=SigAmz0909`
  const shown = () => `${host}/****`
  const scan = (where: string, text: string) => {
    for (const piece of planted) expect(text, `${where} shows ${piece}`).not.toContain(piece)
  }

  it("no answer, log line or span shows a stored webhook URL past its host", async () => {
    // The live log tail, followed from the start: every line it streams is scanned too.
    const tailing = new AbortController()
    let tail = ""
    const tailResponse = await server.request("/api/v1/admin/logs/stream", { signal: tailing.signal })
    expect(tailResponse.status).toBe(200)
    void (async () => {
      const reader = tailResponse.body!.pipeThrough(new TextDecoderStream()).getReader()
      for (let read = await reader.read(); !read.done; read = await reader.read()) tail += read.value
    })().catch(() => undefined)
    const created = await server.request("/api/v1/sessions", {
      method: "POST",
      body: JSON.stringify({ client_id: "planted", dispatch_config: { dispatch_type: "webhook", url: slackLike() } })
    })
    expect(created.status).toBe(200)
    const session = await json(created)
    const read = await json(await server.request(`/sessions/${session.session_id}`))
    expect(read.dispatch_config).toEqual({ dispatch_type: "webhook", url: shown() })

    // Delivered in the clear through the session's own dispatch_config.
    const delivered = await json(
      await server.request(`/api/v1/sessions/${session.session_id}/messages`, {
        method: "POST",
        body: JSON.stringify({ content: "report please", source: "test", run_agent: true, notify: true })
      })
    )
    // One to a port nobody listens on, one to an address the guard refuses: both fail with the URL in hand.
    const failing = await json(
      await server.request(`/api/v1/sessions/${session.session_id}/messages`, {
        method: "POST",
        body: JSON.stringify({
          content: "again",
          source: "test",
          run_agent: true,
          notify: true,
          dispatch_type: "webhook",
          dispatch_config: { url: `http://127.0.0.1:${closedPort}/x/failPathTok16180?sig=onlyPathSegmentZ9` }
        })
      })
    )
    await taskEnded(server, delivered.task_id)
    await taskEnded(server, failing.task_id)
    const refused = await json(
      await server.request(`/api/v1/sessions/${session.session_id}/messages`, {
        method: "POST",
        body: JSON.stringify({
          content: "once more",
          source: "test",
          run_agent: true,
          notify: true,
          dispatch_type: "webhook",
          dispatch_config: { url: "http://10.255.255.1/refused/refusedPathTok1414" }
        })
      })
    )
    await taskEnded(server, refused.task_id)
    const deliveries = await waitFor(
      async () => {
        const tasks = await Promise.all(
          [delivered, failing, refused].map(async (t) => json(await server.request(`/api/v1/tasks/${t.task_id}`)))
        )
        return tasks.every((t) => t.delivery_status !== "pending") ? tasks : undefined
      },
      "the three deliveries to end",
      30_000
    )
    expect(deliveries.map((t) => t.delivery_status)).toEqual(["delivered", "failed", "failed"])
    // The receiver gets the hook webhook's events too: the task's delivery is the one to /services.
    const arrived = await waitFor(
      () => receiver.requests.find((r) => r.url.startsWith("/services/")),
      "the delivery at the receiver",
      20_000
    )
    expect(arrived.url).toBe(
      "/services/T0PLANTED1/B0PLANTED2/PathSecretXyz123456?hmac=HmacOdd98765&k=kOddValue5544&X-Amz-Signature=SigAmz0909"
    )
    expect(arrived.headers.authorization).toBe(`Basic ${Buffer.from("user:userinfoPw777").toString("base64")}`)

    // A heartbeat's target, and the shown form sent back keeps it.
    const channel = await json(
      await server.request("/api/v1/admin/channels", { method: "POST", body: JSON.stringify({ name: "planted-beat", bot_id: "default" }) })
    )
    const beat = (config: Record<string, unknown>) =>
      server.request(`/api/v1/channels/${channel.id}/heartbeat`, {
        method: "PUT",
        body: JSON.stringify({
          prompt: "Anything?",
          interval_seconds: 3600,
          enabled: false,
          dispatch_type: "webhook",
          dispatch_config: config
        })
      })
    const beatUrl = `${host}/beat/beatPathTok1732?hmac=beatQueryHmac2236`
    expect((await json(await beat({ url: beatUrl }))).dispatch_config).toEqual({ url: shown() })
    expect((await beat({ url: shown() })).status).toBe(200)
    const stored = await server.run(
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const secrets = yield* makeDispatchSecrets
        const rows = yield* sql<
          { dispatch_config: unknown }
        >`SELECT dispatch_config FROM channel_heartbeats WHERE channel_id = ${channel.id}`
        const config = typeof rows[0]!.dispatch_config === "string" ? JSON.parse(rows[0]!.dispatch_config) : rows[0]!.dispatch_config
        return { raw: JSON.stringify(config), opened: secrets.open(config) }
      }).pipe(
        // The server's own secret: the one it keeps in DATA_DIR.
        Effect.provide(ServerSecretLive.pipe(Layer.provide(AppConfig.layer))),
        Effect.withConfigProvider(ConfigProvider.fromMap(new Map([["DATA_DIR", db.dataDir]])))
      )
    )
    expect(stored.opened).toEqual({ url: beatUrl })
    expect(stored.raw).toContain(`${host}/sealed%3A`)
    scan("the stored heartbeat", stored.raw)

    // Hook webhooks fired by the runs above: one reached the receiver, one failed (and was logged).
    await waitFor(
      () => (logs.some((line) => line.includes("Hook webhook delivery failed")) ? true : undefined),
      "a failed hook webhook's log line",
      30_000
    )

    const answers: Record<string, string> = {}
    for (
      const path of [
        "/sessions",
        "/api/v1/sessions",
        `/sessions/${session.session_id}`,
        `/api/v1/sessions/${session.session_id}/export`,
        "/api/v1/tasks",
        ...[delivered, failing, refused].map((t) => `/api/v1/tasks/${t.task_id}`),
        `/api/v1/channels/${channel.id}/heartbeat`,
        "/api/v1/admin/logs",
        "/api/v1/admin/tool-calls",
        ...deliveries.map((t) => `/api/v1/admin/traces/${t.run_id}`)
      ]
    ) {
      const response = await server.request(path)
      answers[path] = await response.text()
      scan(`GET ${path}`, answers[path])
    }
    expect(answers["/sessions"]).toContain(shown())
    expect(answers[`/api/v1/tasks/${failing.task_id}`]).toContain(`http://127.0.0.1:${closedPort}/****`)

    // Spans reach the collector in batches: wait for the runs' to arrive, then scan every one.
    await waitFor(() => (spans.join("\n").includes("Dispatchers.deliver") ? true : undefined), "the delivery spans", 30_000)
    scan("the exported spans", spans.join("\n"))
    expect(logs.join("\n")).toContain(`http://127.0.0.1:${closedPort}/****`)
    scan("the log", logs.join("\n"))
    await waitFor(() => (tail.includes(`http://127.0.0.1:${closedPort}/****`) ? true : undefined), "the failed delivery in the tail")
    tailing.abort()
    scan("the live log tail", tail)

    const rows = await server.run(
      Effect.flatMap(SqlClient.SqlClient, (sql) =>
        Effect.all([
          sql`SELECT dispatch_config FROM sessions WHERE client_id = 'planted'`,
          sql`SELECT dispatch_config, delivery_error, error FROM tasks`
        ]))
    )
    scan("the rows", JSON.stringify(rows))
  })
})
