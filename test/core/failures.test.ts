/** What the server says when things go wrong: database loss, bad configuration, no PostgreSQL. */
import pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { adminUrl, createTestDatabase } from "../support/database.ts"
import { json, runCli, spawnDeadlineMs, startServer, type TestServer } from "../support/server.ts"
import { until } from "../support/time.ts"

describe("when the database goes away (postgres)", () => {
  let server: TestServer
  const logs: Array<string> = []
  const dbName = () => new URL(server.db.databaseUrl!).pathname.slice(1)
  const admin = async (query: string) => {
    const client = new pg.Client({ connectionString: adminUrl })
    await client.connect()
    try {
      await client.query(query)
    } finally {
      await client.end()
    }
  }

  beforeAll(async () => {
    server = await startServer({ backend: "postgres", onLog: (line) => logs.push(line) })
  })
  afterAll(async () => {
    await admin(`ALTER DATABASE ${dbName()} ALLOW_CONNECTIONS true`).catch(() => {})
    await server?.close()
  })

  it("answers 500 with a bare detail, logs the cause, and health says 503", async () => {
    await admin(`ALTER DATABASE ${dbName()} ALLOW_CONNECTIONS false`)
    await admin(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '${dbName()}'`)

    // A pooled connection the pool has not yet seen terminated answers as an outage (503, the
    // database went away mid-use); once those are gone, a new connection's refusal is an error.
    const response = await until(
      () => server.request("/api/v1/admin/settings", { method: "PUT", body: JSON.stringify({ SYSTEM_PAUSED: true }) }),
      (answer) => answer.status !== 503,
      20_000,
      "an answer from a connection made after the database refused them"
    )
    expect(response.status).toBe(500)
    const text = await response.text()
    expect(JSON.parse(text)).toEqual({ detail: "Internal server error" })
    expect(text).not.toMatch(/at |SqlError|stack|postgres/i)
    expect(logs.some((line) => line.includes("Unhandled error while serving a request"))).toBe(true)

    const health = await server.request("/health", { auth: null })
    expect(health.status).toBe(503)
    const body = await json(health)
    expect(body.status).toBe("error")
    expect(typeof body.detail).toBe("string")

    await admin(`ALTER DATABASE ${dbName()} ALLOW_CONNECTIONS true`)
    const recovered = await server.request("/health", { auth: null })
    expect(recovered.status).toBe(200)
  })
})

describe("startup failures", () => {
  // Each `cairn …` below is a start of the CLI (from source, when dist/ is stale: a minute on a busy
  // machine): each test has a start's deadline for each.
  it("stops on an invalid setting and names it", { timeout: 3 * spawnDeadlineMs }, async () => {
    const { code, output } = await runCli(["serve"], { PORT: "eighty" })
    expect(code).not.toBe(0)
    expect(output).toContain("PORT")
    const rate = await runCli(["serve"], { RATE_LIMIT_DEFAULT: "fast" })
    expect(rate.code).not.toBe(0)
    expect(rate.output).toContain("RATE_LIMIT_DEFAULT")
    const tier = await runCli(["serve"], { PGLITE_WASM_TIER: "fast" })
    expect(tier.code).not.toBe(0)
    expect(tier.output).toContain("PGLITE_WASM_TIER")
  })

  it("retries an unreachable PostgreSQL, then fails with a clear message and no password", { timeout: spawnDeadlineMs }, async () => {
    const { code, output } = await runCli(["serve"], {
      DATABASE_URL: "postgres://cairn:sekrit-password@127.0.0.1:1/cairn",
      DATABASE_CONNECT_RETRY_SECONDS: "2",
      PORT: "0"
    })
    expect(code).not.toBe(0)
    // It tried again (saying so) before it gave up.
    expect(output).toContain("Cannot connect to PostgreSQL at 127.0.0.1:1/cairn")
    expect(output).toContain("retrying")
    expect(output).not.toContain("sekrit-password")
  })

  it("cairn migrate applies migrations and exits", { timeout: 2 * spawnDeadlineMs }, async () => {
    const db = await createTestDatabase("postgres")
    try {
      const { code, output } = await runCli(["migrate"], { DATABASE_URL: db.databaseUrl! })
      expect(code).toBe(0)
      expect(output).toContain("Applied migrations")
      const again = await runCli(["migrate"], { DATABASE_URL: db.databaseUrl! })
      expect(again.code).toBe(0)
      expect(again.output).not.toContain("Applied migrations")
    } finally {
      await db.drop()
    }
  })
})
