/**
 * Fairness between callers (issue 26): a cap on each credential's running runs (429 with
 * Retry-After past it, the place given back however a run ends), a per-provider limit on model
 * calls whose waiting calls are served round-robin across callers, and a widget's run stopped
 * when its stream's client leaves (when asked). The probe: one key's pile of slow runs must not
 * make another key's single chat wait much longer than it does on an idle server.
 */
import * as crypto from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type CreatedKey, createKey } from "../auth/helpers.ts"
import { type FakeLlm, fakeLlmEnv, startFakeLlm } from "../fixtures/fakeLlm.ts"
import { backends } from "../support/database.ts"
import { json, startServer, type TestServer } from "../support/server.ts"
import { readSse, type SseReader } from "../support/sse.ts"
import { scaled } from "../support/time.ts"

const JWT_SECRET = "fairness-test-secret-0123456789-abcdefghij"

describe.each(backends)("fairness (%s)", (backend) => {
  let server: TestServer
  let llm: FakeLlm
  let a: CreatedKey
  let b: CreatedKey

  beforeAll(async () => {
    llm = await startFakeLlm({ defaultReply: { text: "ok" } })
    server = await startServer({ backend, env: { ...fakeLlmEnv(llm), LLM_MAX_RETRIES: "0", JWT_SECRET } })
    a = await createKey(server, ["chat"])
    b = await createKey(server, ["chat"])
  })
  afterAll(async () => {
    await server?.close()
    await llm?.close()
  })

  const settings = async (values: Record<string, unknown>) =>
    expect((await server.request("/api/v1/admin/settings", { method: "PUT", body: JSON.stringify(values) })).status).toBe(200)

  const chat = (auth: string, message: string, init: RequestInit = {}) =>
    server.request("/chat", { method: "POST", auth, body: JSON.stringify({ message, client_id: `c-${crypto.randomUUID()}` }), ...init })

  /** A streamed run, read until the model is being asked (its context is assembled). */
  const streamed = async (auth: string, message: string) => {
    const controller = new AbortController()
    const response = await server.request("/chat/stream", {
      method: "POST",
      auth,
      body: JSON.stringify({ message, client_id: `c-${crypto.randomUUID()}` }),
      signal: controller.signal
    })
    expect(response.status).toBe(200)
    const sse = readSse(response, controller)
    await sse.until((event) => event.data.type === "context_budget")
    return { sse, sessionId: response.headers.get("x-session-id")! }
  }
  const ended = async (sse: SseReader) => (await sse.rest()).at(-1)?.data.type

  it("refuses a credential's run past RUNS_PER_CREDENTIAL_MAX with 429 and Retry-After, and frees the place however a run ends", async () => {
    await settings({ RUNS_PER_CREDENTIAL_MAX: 2, PROVIDER_CONCURRENCY_MAX: 256 })
    llm.setDefaultReply({ text: "slow answer", delayMs: 1_500 })
    const first = await streamed(a.key, "one")
    const second = await streamed(a.key, "two")

    const refused = await chat(a.key, "three")
    expect(refused.status).toBe(429)
    expect(refused.headers.get("retry-after")).toBe("1")
    expect(await json(refused)).toEqual({
      detail: "This credential already has 2 runs running (RUNS_PER_CREDENTIAL_MAX); retry when one has finished"
    })
    // A passive message starts no run: it is stored as ever.
    const passive = await server.request("/chat", {
      method: "POST",
      auth: a.key,
      body: JSON.stringify({ message: "fyi", client_id: "c-passive", passive: true })
    })
    expect(passive.status).toBe(200)
    // The stream route is held to it as well; another credential is not.
    expect(
      (await server.request("/chat/stream", { method: "POST", auth: a.key, body: JSON.stringify({ message: "x", client_id: "c-x" }) }))
        .status
    ).toBe(429)
    const other = await streamed(b.key, "mine")

    // A cancelled run gives its place back at once.
    const cancel = await server.request("/chat/cancel", {
      method: "POST",
      body: JSON.stringify({ client_id: "-", session_id: first.sessionId })
    })
    expect((await json(cancel)).cancelled).toBe(true)
    expect(await ended(first.sse)).toBe("cancelled")
    const third = await streamed(a.key, "three")
    expect((await chat(a.key, "four")).status).toBe(429)

    // Finished runs give theirs back.
    for (const { sse } of [second, third, other]) expect(await ended(sse)).toBe("response")
    // So do failed ones.
    llm.setDefaultReply({ status: 500 })
    const failing = await Promise.all([chat(a.key, "f1"), chat(a.key, "f2")])
    expect(failing.map((response) => response.status)).toEqual([502, 502])
    llm.setDefaultReply({ text: "ok" })
    expect((await Promise.all([chat(a.key, "g1"), chat(a.key, "g2")])).map((response) => response.status)).toEqual([200, 200])
  })

  it("serves the calls waiting for a provider slot round-robin across callers, not first come first served", async () => {
    await settings({ RUNS_PER_CREDENTIAL_MAX: 50, PROVIDER_CONCURRENCY_MAX: 1 })
    llm.reset()
    // The provider answers nothing until the gate opens: the one slot stays taken while every call
    // below gets in line, however slowly a busy machine brings each there.
    let open = () => {}
    const gate = new Promise<void>((resolve) => (open = resolve))
    llm.setDefaultReply({ text: "ok", waitFor: gate })
    // Eight of a's runs, each read until its model call is asked for: one at the provider, the others waiting for the one slot.
    const piled = await Promise.all(Array.from({ length: 8 }, (_, i) => streamed(a.key, `pile-${i}`)))
    const single = await streamed(b.key, "just one")
    open()
    expect(await ended(single.sse)).toBe("response")
    for (const { sse } of piled) expect(await ended(sse)).toBe("response")
    const order = llm.requestsTo("/v1/chat/completions").map((request) => JSON.stringify(request.body.messages))
    // First come first served would put b's call last (ninth, after all of a's). In turn: a's lane
    // joined the line first, so a's oldest waiting call goes when the slot frees, then b's, ahead
    // of a's other six (src/providers/FairQueue.ts).
    expect(order.findIndex((messages) => messages.includes("just one"))).toBe(2)
    expect(order).toHaveLength(9)
  })

  // The probe's latencies are printed for the record (issue 26's figure: within 2x of idle); what is
  // asserted is the order that makes them so: another key's chat is not queued behind the pile.
  it("the probe: another key's chat goes to the provider ahead of one key's 40 slow runs", async () => {
    await settings({ RUNS_PER_CREDENTIAL_MAX: 100, PROVIDER_CONCURRENCY_MAX: 4 })
    // Calls long enough that a's pile (40 calls, four at a time: ten rounds) is still draining when
    // b's calls come, however busy the machine: at 300 ms, a loaded run drained most of it while the
    // pile was still being started, and all of it before b's calls came.
    llm.setDefaultReply({ text: "ok", delayMs: scaled(1_000) })
    const timed = async () => {
      const started = performance.now()
      const response = await chat(b.key, "how long")
      expect(response.status).toBe(200)
      return performance.now() - started
    }
    await timed()
    const idle = Math.min(await timed(), await timed())

    // Forty of a's runs, each read until its model call is asked for: four at the provider, the
    // rest waiting. The first four start a quarter of a call apart, so the slots free one at a time
    // (as they do once calls of different lengths mix), not four at once.
    const pile: Array<Awaited<ReturnType<typeof streamed>>> = []
    for (let i = 0; i < 4; i++) {
      pile.push(await streamed(a.key, `slow-${i}`))
      await new Promise((resolve) => setTimeout(resolve, 75))
    }
    pile.push(...(await Promise.all(Array.from({ length: 36 }, (_, i) => streamed(a.key, `slow-${i + 4}`)))))
    // Like the idle latency, the better of two (sent together, so both meet a's waiting calls).
    const loaded = Math.min(...(await Promise.all([timed(), timed()])))
    console.info(`probe (${backend}): idle ${idle.toFixed(0)} ms, beside 40 slow runs ${loaded.toFixed(0)} ms`)
    // Both of b's calls reached the provider while a's calls still waited: some of a's went after them.
    const calls = llm.requestsTo("/v1/chat/completions")
    const mine = calls.findLastIndex((request) => JSON.stringify(request.body).includes("how long"))
    expect(calls.slice(mine + 1).filter((request) => JSON.stringify(request.body).includes("slow-")).length).toBeGreaterThan(0)
    for (const { sse } of pile) expect(await ended(sse)).toBe("response")
  })

  it("cancels a widget's run when its stream's client disconnects, only with WIDGET_STOP_ON_DISCONNECT on", async () => {
    await settings({ PROVIDER_CONCURRENCY_MAX: 256 })
    const botKey = await createKey(server, ["chat"])
    expect(
      (await server.request("/api/v1/admin/bots", {
        method: "POST",
        body: JSON.stringify({ id: "fair-widget", name: "Widget bot", api_key_id: botKey.id })
      })).status
    ).toBeLessThan(300)
    const minted = await json(
      await server.request("/api/v1/widget-auth/mint", { method: "POST", body: JSON.stringify({ source_bot_id: "fair-widget" }) })
    )
    const slowly = { text: "a b c d e f g h i j k l m n o p", chunkDelayMs: 60 }

    /** A widget stream dropped after its first text; answers how the run ended, read by rejoining. */
    const dropped = async () => {
      llm.setDefaultReply(slowly)
      const controller = new AbortController()
      const response = await server.request("/chat/stream", {
        method: "POST",
        auth: minted.token,
        body: JSON.stringify({ message: "hello", client_id: `w-${crypto.randomUUID()}`, bot_id: "fair-widget" }),
        signal: controller.signal
      })
      expect(response.status).toBe(200)
      const sessionId = response.headers.get("x-session-id")!
      const sse = readSse(response, controller)
      await sse.until((event) => event.data.type === "assistant_text")
      sse.abort()
      const rejoined = await readSse(await server.request(`/api/v1/sessions/${sessionId}/stream?after=0`)).rest()
      return rejoined.map((event) => event.data.type).filter((type) => type === "cancelled" || type === "response")
    }

    // Off (the default): the run outlives its client.
    expect(await dropped()).toEqual(["response"])
    await settings({ WIDGET_STOP_ON_DISCONNECT: true })
    expect(await dropped()).toEqual(["cancelled"])
    // A key's run still outlives its client.
    llm.setDefaultReply(slowly)
    const controller = new AbortController()
    const response = await server.request("/chat/stream", {
      method: "POST",
      auth: a.key,
      body: JSON.stringify({ message: "hello", client_id: `k-${crypto.randomUUID()}` }),
      signal: controller.signal
    })
    const sessionId = response.headers.get("x-session-id")!
    const sse = readSse(response, controller)
    await sse.until((event) => event.data.type === "assistant_text")
    sse.abort()
    const rejoined = await readSse(await server.request(`/api/v1/sessions/${sessionId}/stream?after=0`)).rest()
    expect(rejoined.at(-1)?.data.type).toBe("response")
    await settings({ WIDGET_STOP_ON_DISCONNECT: false })
  })
})
