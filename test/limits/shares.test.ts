/**
 * Fair shares at the provider (issue 62, item 7): a caller holding slots leaves the provider's
 * reserve to callers holding none, so a greedy key's 300 slow completion-proxy calls leave another
 * user's chat within twice the latency it had on the idle server. The latencies are compared with the idle one measured first in the same run (the issue
 * asks for this ratio); the model answers that user's chat a few hundred milliseconds after it is
 * asked, so the ratio reads the wait for a slot, not the noise of a busy machine.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { FairQueue } from "../../src/providers/FairQueue.ts"
import { reserveOf } from "../../src/providers/Gate.ts"
import { createKey } from "../auth/helpers.ts"
import { type FakeLlm, fakeLlmEnv, startFakeLlm } from "../fixtures/fakeLlm.ts"
import { backends } from "../support/database.ts"
import { json, startServer, type TestServer } from "../support/server.ts"
import { eventually, scaled } from "../support/time.ts"

describe("the provider queue's turns and shares", () => {
  it("serves the first lane in turn that may be served, and keeps the places of those passed over", () => {
    const queue = new FairQueue<string>()
    for (const [caller, waiter] of [["greedy", "g1"], ["greedy", "g2"], ["other", "o1"], ["third", "t1"]] as const) {
      queue.push(caller, waiter)
    }
    expect(queue.next((caller) => caller !== "greedy")).toBe("o1")
    expect(queue.next((caller) => caller !== "greedy")).toBe("t1")
    expect(queue.next((caller) => caller !== "greedy")).toBeUndefined()
    expect(queue.next()).toBe("g1")
    expect(queue.size).toBe(1)
  })

  it("keeps an eighth of the slots for callers holding none (one of two or more; none of one)", () => {
    expect([1, 2, 4, 8, 16, 256].map(reserveOf)).toEqual([0, 1, 1, 1, 2, 32])
  })
})

describe.each(backends)("fair shares (%s)", (backend) => {
  let server: TestServer
  let llm: FakeLlm
  let member: string

  /** The greedy calls' model, answered slowly; the user's chat asks the default one. */
  const slowModel = "fake-model-2"

  beforeAll(async () => {
    llm = await startFakeLlm({ record: true })
    server = await startServer({ backend, env: { ...fakeLlmEnv(llm), LLM_MAX_RETRIES: "0", PROVIDER_CONCURRENCY_MAX: "16" } })
    const created = await server.request("/api/v1/admin/users", {
      method: "POST",
      body: JSON.stringify({ username: "patient", password: "patient user's password" })
    })
    expect(created.status).toBe(201)
    const signedIn = await server.request("/auth/login", {
      method: "POST",
      auth: null,
      body: JSON.stringify({ username: "patient", password: "patient user's password" })
    })
    member = (await json(signedIn)).access_token
  })
  afterAll(async () => {
    await server?.close()
    await llm?.close()
  })

  /** The user's chat, in one session: how long it took to be answered. */
  let session: string | undefined
  const chat = async () => {
    const started = performance.now()
    const response = await server.request("/chat", {
      method: "POST",
      auth: member,
      body: JSON.stringify({ message: "how long", client_id: "patient", ...(session ? { session_id: session } : {}) })
    })
    expect(response.status).toBe(200)
    session = (await json(response)).session_id
    return performance.now() - started
  }
  /** The best of three in a row, as the latency a user sees when nothing goes wrong on the machine. */
  const latency = async () => Math.min(await chat(), await chat(), await chat())

  /** `n` completion-proxy calls of `key` to the slow model; their answers are not awaited here. */
  const pile = (key: string, n: number, controller: AbortController) =>
    Array.from({ length: n }, () =>
      server.request("/api/v1/llm/completions", {
        method: "POST",
        auth: key,
        body: JSON.stringify({ model: slowModel, messages: [{ role: "user", content: "greedy" }] }),
        signal: controller.signal
      }).catch(() => undefined))

  const greedyAtProvider = () => llm.requestsTo("/v1/chat/completions").filter((r) => r.body.model === slowModel).length

  it("leaves another user's chat within twice its idle latency beside one key's 300 slow proxy calls", async () => {
    // The greedy calls outlast the measurements however busy the machine; the user's are quick.
    llm.setDefaultReply({ text: "ok", delayMs: 300, delayByModel: { [slowModel]: scaled(60_000) } })
    await chat()
    const idle = await latency()

    const controller = new AbortController()
    try {
      const greedy = await createKey(server, ["llm:completions"])
      void pile(greedy.key, 300, controller)
      // The greedy key holds every slot it may (16 less the reserve of 2); the rest of its calls wait.
      await eventually(() => greedyAtProvider() === 14, "the greedy calls to take their share", 60_000)
      const beside = await latency()
      console.info(`fair shares (${backend}): idle ${idle.toFixed(0)} ms, beside one key's 300 slow calls ${beside.toFixed(0)} ms`)
      // Without the reserve the wait is for one of the greedy calls to end (a minute).
      expect(beside / idle).toBeLessThan(2)
      // The greedy key never took the reserve.
      expect(greedyAtProvider()).toBe(14)
    } finally {
      controller.abort()
    }
  })
})
