/**
 * Heartbeats on a running server: a seconds interval fires on its slots, the answer is posted through
 * a custom dispatcher's post_message (secrets opened for it, masked in answers), "nothing to report"
 * is not posted, quiet hours hold slots back, "run now", bad settings refused, a missed slot fires
 * once at start only with catch_up; and with two server processes on one PostgreSQL each slot
 * fires once.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Dispatchers } from "../../src/tasks/delivery/index.ts"
import { type FakeLlm, startFakeLlm } from "../fixtures/fakeLlm.ts"
import { backends, createTestDatabase, type TestDatabase, withDatabase } from "../support/database.ts"
import { json, spawnDeadlineMs, spawnServer, startServer, type TestServer } from "../support/server.ts"
import { scaled, waitFor } from "../support/time.ts"

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

describe.each(backends)("heartbeats (%s)", (backend) => {
  let llm: FakeLlm
  let db: TestDatabase
  let server: TestServer
  const posts: Array<{ config: Record<string, unknown>; text: string; botId: unknown; extra: any }> = []
  const env = () => ({ OPENAI_BASE_URL: llm.url, OPENAI_API_KEY: "sk-heartbeat", DEFAULT_MODEL: "fake-model", HEARTBEAT_TICK_MS: "200" })
  const start = async () => {
    server = await startServer({ backend, db, env: env() })
    await server.run(
      Effect.flatMap(Dispatchers, (registry) =>
        registry.register("pager", {
          deliver: async (_task: unknown, _result: string, _clientActions: unknown, _extraMetadata: unknown) => undefined,
          postMessage: async (
            config: Record<string, unknown>,
            text: string,
            { botId, extraMetadata }: { botId?: unknown; extraMetadata?: unknown }
          ) => {
            posts.push({ config, text, botId, extra: extraMetadata })
            return true
          }
        }))
    )
  }
  const channel = async (name: string) =>
    (await json(await server.request("/api/v1/admin/channels", { method: "POST", body: JSON.stringify({ name, bot_id: "default" }) })))
      .id as string
  const put = (channelId: string, body: Record<string, unknown>) =>
    server.request(`/api/v1/channels/${channelId}/heartbeat`, { method: "PUT", body: JSON.stringify(body) })
  const runs = async (channelId: string) => (await json(await server.request(`/api/v1/channels/${channelId}/heartbeat/runs`))) as Array<any>

  beforeAll(async () => {
    llm = await startFakeLlm({ defaultReply: { text: "The tide turns at noon." } })
    db = await createTestDatabase(backend, { migrated: true })
    await start()
  })
  afterAll(async () => {
    await server?.close()
    await db?.drop()
    await llm?.close()
  })

  it("fires on its slots and posts the answer through the dispatcher's post_message", async () => {
    const id = await channel("harbour")
    const before = Date.now()
    const set = await put(id, {
      prompt: "Anything new at the harbour?",
      interval_seconds: 1,
      dispatch_type: "pager",
      dispatch_config: { room: "ops", token: "pager-secret-token" }
    })
    expect(set.status).toBe(200)
    const heartbeat = await json(set)
    expect(heartbeat).toMatchObject({
      channel_id: id,
      interval_seconds: 1,
      cron: null,
      timezone: "UTC",
      only_when_something: true,
      dispatch_config: { room: "ops", token: "****" }
    })
    // Its next slot is not before it was set (measured from before the request, so a slow answer does not count).
    expect(Date.parse(heartbeat.next_at)).toBeGreaterThan(before - 1000)
    await expect.poll(async () => (await runs(id)).filter((r) => r.status === "posted").length, { timeout: 10_000 }).toBeGreaterThanOrEqual(
      2
    )
    const mine = posts.filter((p) => p.extra?.channel_id === id)
    expect(mine[0]).toMatchObject({
      text: "The tide turns at noon.",
      botId: "default",
      config: { room: "ops", token: "pager-secret-token" }
    })
    const history = await runs(id)
    // One run per slot, each a second apart on the grid.
    const slots = history.map((r) => Date.parse(r.slot)).sort()
    for (let i = 1; i < slots.length; i++) expect((slots[i]! - slots[i - 1]!) % 1000).toBe(0)
    expect(new Set(slots).size).toBe(slots.length)
    expect(history[0]).toMatchObject({ trigger: "schedule" })
    await put(id, { prompt: "off", interval_seconds: 1, enabled: false })
    expect((await json(await server.request(`/api/v1/channels/${id}/heartbeat`))).next_at).toBeNull()
  })

  it("keeps a stored secret when a client sends back the mask it was shown", async () => {
    const id = await channel("masked")
    await put(id, {
      prompt: "Ping",
      interval_seconds: 3600,
      dispatch_type: "pager",
      dispatch_config: { room: "ops", token: "kept-secret-token-123" }
    })
    const shown = await json(await server.request(`/api/v1/channels/${id}/heartbeat`))
    expect(shown.dispatch_config).toEqual({ room: "ops", token: "****" })
    expect(
      (await put(id, { prompt: "Ping again", interval_seconds: 3600, dispatch_type: "pager", dispatch_config: shown.dispatch_config }))
        .status
    ).toBe(200)
    llm.script({ text: "Pong." })
    await server.request(`/api/v1/channels/${id}/heartbeat/run`, { method: "POST" })
    await expect.poll(() => posts.filter((p) => p.extra?.channel_id === id).length, { timeout: 10_000 }).toBe(1)
    expect(posts.find((p) => p.extra?.channel_id === id)!.config).toEqual({ room: "ops", token: "kept-secret-token-123" })
  })

  it("does not post an answer with nothing to report", async () => {
    const id = await channel("quiet-sea")
    llm.script({ text: "NOTHING_TO_REPORT" })
    const before = posts.length
    expect((await put(id, { prompt: "Report only news.", interval_seconds: 3600, dispatch_type: "pager" })).status).toBe(200)
    const now = await server.request(`/api/v1/channels/${id}/heartbeat/run`, { method: "POST" })
    expect(now.status).toBe(202)
    expect(await json(now)).toMatchObject({ trigger: "manual", status: "running" })
    await expect.poll(async () => (await runs(id))[0]?.status, { timeout: 10_000 }).toBe("silent")
    expect((await runs(id))[0].result).toBe("NOTHING_TO_REPORT")
    expect(posts.filter((p) => p.extra?.channel_id === id)).toHaveLength(0)
    expect(posts.length).toBe(before)
  })

  it("holds slots back in quiet hours, recording them as quiet without asking the bot", async () => {
    const id = await channel("night")
    const hour = new Date().getUTCHours()
    const pad = (h: number) => String(h).padStart(2, "0") + ":00"
    const calls = llm.requestsTo("/v1/chat/completions").length
    expect(
      (await put(id, {
        prompt: "Night watch",
        interval_seconds: 1,
        quiet_start: pad(hour),
        quiet_end: pad((hour + 2) % 24),
        dispatch_type: "pager"
      })).status
    ).toBe(200)
    await expect.poll(async () => (await runs(id)).length, { timeout: 10_000 }).toBeGreaterThanOrEqual(2)
    expect((await runs(id)).every((r) => r.status === "quiet" && r.task_id === null)).toBe(true)
    await put(id, { prompt: "Night watch", interval_seconds: 1, enabled: false })
    // Other channels' heartbeats are off by now: no model call was made for this one.
    expect(llm.requestsTo("/v1/chat/completions").length).toBe(calls)
  })

  it("refuses bad settings with 422 and an unknown channel with 404", async () => {
    const id = await channel("typos")
    const bad = async (body: Record<string, unknown>) => {
      const response = await put(id, body)
      expect(response.status).toBe(422)
      return (await json(response)).detail
    }
    await bad({ prompt: "x" })
    await bad({ prompt: "x", interval_seconds: 60, cron: "* * * * *" })
    expect(JSON.stringify(await bad({ prompt: "x", cron: "at nine" }))).toContain("Invalid cron expression")
    await bad({ prompt: "x", interval_seconds: 60, timezone: "Mars/Olympus" })
    await bad({ prompt: "x", interval_seconds: 60, quiet_start: "25:00", quiet_end: "07:00" })
    await bad({ prompt: "x", interval_seconds: 60, quiet_start: "22:00" })
    await bad({ prompt: "x", interval_seconds: 60, dispatch_type: "carrier-pigeon" })
    expect((await put(crypto.randomUUID(), { prompt: "x", interval_seconds: 60 })).status).toBe(404)
    expect((await server.request(`/api/v1/channels/${id}/heartbeat`)).status).toBe(404)
    const ended = await json(await put(id, { prompt: "Done already", interval_seconds: 60, ends_at: "2020-01-01T00:00:00Z" }))
    expect(ended.next_at).toBeNull()
    const ending = await json(
      await put(id, { prompt: "One more", interval_seconds: 60, ends_at: new Date(Date.now() + 90_000).toISOString() })
    )
    expect(Date.parse(ending.next_at)).toBeLessThanOrEqual(Date.now() + 90_000)
    const cron = await put(id, { prompt: "Weekday mornings", cron: "0 9 * * 1-5", timezone: "Europe/Oslo" })
    expect(cron.status).toBe(200)
    const next = new Date((await json(cron)).next_at)
    expect(new Intl.DateTimeFormat("en-GB", { timeZone: "Europe/Oslo", hour: "2-digit", minute: "2-digit", hourCycle: "h23" }).format(next))
      .toBe("09:00")
  })

  it("fires a slot missed while no server ran once at start with catch_up, and skips it without", async () => {
    const withCatchUp = await channel("catch-up")
    const without = await channel("no-catch-up")
    await put(withCatchUp, { prompt: "Missed me?", interval_seconds: 3600, catch_up: true, dispatch_type: "pager" })
    await put(without, { prompt: "Missed me?", interval_seconds: 3600, dispatch_type: "pager" })
    await server.close()
    // Down for three hours: the slots went by.
    await withDatabase(
      db,
      Effect.flatMap(
        SqlClient.SqlClient,
        (sql) =>
          sql`UPDATE channel_heartbeats SET anchor = anchor - interval '3 hours', next_at = now() - interval '3 hours' WHERE channel_id IN (${withCatchUp}, ${without})`
      )
    )
    await start()
    await expect.poll(async () => (await runs(withCatchUp))[0]?.status, { timeout: 10_000 }).toBe("posted")
    await sleep(1000)
    const caught = await runs(withCatchUp)
    expect(caught.map((r) => r.trigger)).toEqual(["catch_up"])
    expect(await runs(without)).toEqual([])
    for (const id of [withCatchUp, without]) {
      const next = Date.parse((await json(await server.request(`/api/v1/channels/${id}/heartbeat`))).next_at)
      expect(next).toBeGreaterThan(Date.now())
    }
  }, scaled(60_000))
})

describe("heartbeats with two server processes on one PostgreSQL", () => {
  it("fire each slot once", async () => {
    const llm = await startFakeLlm({ defaultReply: { text: "Status: all well." } })
    const received: Array<{ text: string; slot: string }> = []
    const hook = http.createServer((req, res) => {
      let body = ""
      req.on("data", (chunk) => (body += chunk))
      req.on("end", () => {
        const parsed = JSON.parse(body)
        received.push({ text: parsed.text, slot: parsed.extra_metadata?.slot })
        res.writeHead(200).end("{}")
      })
    })
    await new Promise<void>((resolve) => hook.listen(0, "127.0.0.1", resolve))
    const db = await createTestDatabase("postgres", { migrated: true })
    const env = {
      OPENAI_BASE_URL: llm.url,
      OPENAI_API_KEY: "sk-heartbeat",
      DEFAULT_MODEL: "fake-model",
      HEARTBEAT_TICK_MS: "100",
      LEADER_RETRY_MS: "300",
      WEBHOOK_ALLOWED_HOSTS: "127.0.0.1"
    }
    const first = await spawnServer(db, env)
    const second = await spawnServer(db, env)
    try {
      const channel = await json(
        await first.request("/api/v1/admin/channels", { method: "POST", body: JSON.stringify({ name: "twin", bot_id: "default" }) })
      )
      const url = `http://127.0.0.1:${(hook.address() as AddressInfo).port}/heartbeat`
      const set = await second.request(`/api/v1/channels/${channel.id}/heartbeat`, {
        method: "PUT",
        body: JSON.stringify({ prompt: "Status?", interval_seconds: 1, dispatch_type: "webhook", dispatch_config: { url } })
      })
      expect(set.status).toBe(200)
      const runsOf = async () =>
        (await json(await first.request(`/api/v1/channels/${channel.id}/heartbeat/runs`))) as Array<{ slot: string; status: string }>
      // Three slots or more with both processes up (however long a busy machine takes to get there).
      await waitFor(async () => ((await runsOf()).length >= 3 ? true : undefined), "three heartbeat runs", 60_000)
      await first.request(`/api/v1/channels/${channel.id}/heartbeat`, {
        method: "PUT",
        body: JSON.stringify({ prompt: "Status?", interval_seconds: 1, enabled: false })
      })
      // A scheduler tick under way may still start one (ticks are 100 ms apart); then the runs under
      // way end, and what they posted is delivered.
      await sleep(1500)
      const history = await waitFor(async () => {
        const runs = await runsOf()
        const settled = runs.every((r) => r.status !== "running") && received.length === runs.filter((r) => r.status === "posted").length
        return settled ? runs : undefined
      }, "the last runs to end and deliver")
      expect(history.length).toBeGreaterThanOrEqual(3)
      expect(new Set(history.map((r) => r.slot)).size).toBe(history.length)
      const posted = history.filter((r) => r.status === "posted")
      expect(received.length).toBe(posted.length)
      expect(new Set(received.map((r) => r.slot)).size).toBe(received.length)
      expect(llm.requestsTo("/v1/chat/completions").length).toBe(history.length)
    } finally {
      await first.stop()
      await second.stop()
      await db.drop()
      await llm.close()
      hook.close()
    }
    // Two starts of `cairn serve` in turn, and the waits above.
  }, 2 * spawnDeadlineMs + scaled(90_000))
})
