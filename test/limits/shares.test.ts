/**
 * Fair shares at the provider (issue 62, item 7), asserted by what the provider received and in
 * what order, never by how long anything took (the latencies are measured in bench/shares.ts).
 * The fake provider holds every greedy call until the test lets them go, so nothing ends by
 * itself: the other user's chat is answered only if it was served before the greedy calls that
 * wait for a slot. A completion-proxy call counts against its credential's RUNS_PER_CREDENTIAL_MAX
 * as a run does; a user's many keys wait in one lane.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { FairQueue } from "../../src/providers/FairQueue.ts"
import { callerOf, reserveOf } from "../../src/providers/Gate.ts"
import { createKey } from "../auth/helpers.ts"
import { type FakeLlm, fakeLlmEnv, startFakeLlm } from "../fixtures/fakeLlm.ts"
import { backends } from "../support/database.ts"
import { json, startServer, type TestServer } from "../support/server.ts"
import { eventually, within } from "../support/time.ts"

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

  it("puts a user's keys in the user's lane, and a key no user owns in its own", () => {
    const key = (id: string, user?: string) => ({ source: "proxy" as const, caller: `scoped_key:${id}`, ...(user ? { user } : {}) })
    expect(new Set([key("a", "u1"), key("b", "u1"), { source: "agent" as const, caller: "user:u1", user: "u1" }].map(callerOf)))
      .toEqual(new Set(["user:u1"]))
    expect(callerOf(key("c"))).toBe("scoped_key:c")
  })
})

/** The provider's slots in these tests: one is the reserve, so a greedy caller holds three. */
const slots = 4
const greedyShare = slots - reserveOf(slots)

describe.each(backends)("fair shares (%s)", (backend) => {
  let server: TestServer
  let llm: FakeLlm
  let member: string
  let admin: { id: string; token: string }
  /** Lets every held call answer; a new gate holds the next ones. */
  let release: () => void = () => {}

  /** The greedy calls' model; the patient user's chat asks the default one. */
  const greedyModel = "fake-model-2"

  const signIn = async (username: string, role: "admin" | "member") => {
    const password = `${username} user's password`
    const created = await server.request("/api/v1/admin/users", { method: "POST", body: JSON.stringify({ username, password, role }) })
    expect(created.status).toBe(201)
    const signedIn = await server.request("/auth/login", { method: "POST", auth: null, body: JSON.stringify({ username, password }) })
    return { id: (await json(created)).id as string, token: (await json(signedIn)).access_token as string }
  }

  beforeAll(async () => {
    llm = await startFakeLlm({ record: true })
    // Retries stay on: a kept-alive socket the fake closes just as it is reused (ECONNRESET) is tried again.
    server = await startServer({
      backend,
      env: { ...fakeLlmEnv(llm), PROVIDER_CONCURRENCY_MAX: String(slots), RUNS_PER_CREDENTIAL_MAX: "16" }
    })
    member = (await signIn("patient", "member")).token
    admin = await signIn("greedy", "admin")
  })
  afterAll(async () => {
    release()
    await server?.close()
    await llm?.close()
  })

  /** Every reply from now on waits for `release()`. */
  const hold = () => {
    const gate = new Promise<void>((resolve) => (release = resolve))
    llm.setDefaultReply({ text: "ok", waitFor: gate })
  }

  const proxy = (key: string) =>
    server.request("/api/v1/llm/completions", {
      method: "POST",
      auth: key,
      body: JSON.stringify({ model: greedyModel, messages: [{ role: "user", content: "greedy" }] })
    })

  const greedyAtProvider = () => llm.requestsTo("/v1/chat/completions").filter((r) => r.body.model === greedyModel).length

  /**
   * The patient user's chat while the greedy calls are held: answered at once by a reply scripted
   * for it. Answered means it took a slot ahead of every greedy call still waiting for one (those
   * would have taken the scripted reply, and the chat would wait on the held ones).
   */
  const patientChat = async () => {
    llm.script({ text: "served" })
    const response = await within(
      server.request("/chat", { method: "POST", auth: member, body: JSON.stringify({ message: "my turn?", client_id: "patient" }) }),
      "the patient user's chat to be served beside the greedy calls",
      60_000
    )
    expect(response.status).toBe(200)
    expect((await json(response)).response).toBe("served")
  }

  it("counts one key's proxy calls against its run cap, and serves another user's chat before its waiting calls", async () => {
    hold()
    const greedy = await createKey(server, ["llm:completions"])
    // Made with the static key: no user owns it, so it is a lane of its own.
    expect((await json(await server.request(`/api/v1/admin/api-keys/${greedy.id}`))).owner_user_id).toBeNull()
    const answered: Array<Response> = []
    const calls = Array.from({ length: 300 }, () => proxy(greedy.key).then((response) => (answered.push(response), response)))
    // Proxy calls count as runs: 16 go on, the other 284 are refused at once, before the provider.
    await eventually(() => answered.length === 284, "the calls past the key's cap to be refused", 60_000)
    expect(answered.map((response) => response.status)).toEqual(Array(284).fill(429))
    expect(answered[0]!.headers.get("retry-after")).toBe("1")
    expect((await json(answered[0]!)).detail).toBe(
      "This credential already has 16 runs running (RUNS_PER_CREDENTIAL_MAX); retry when one has finished"
    )
    // The key holds what it may (the slots less the reserve); its other 13 admitted calls wait.
    await eventually(() => greedyAtProvider() === greedyShare, "the greedy key to take its share of the slots", 60_000)
    await patientChat()
    // Served beside them: no greedy call took a slot meanwhile.
    expect(greedyAtProvider()).toBe(greedyShare)

    release()
    const statuses = (await Promise.all(calls)).map((response) => response.status)
    expect(statuses.filter((status) => status === 200)).toHaveLength(16)
    expect(greedyAtProvider()).toBe(16)
  })

  it("serves another user's chat before the waiting calls of one user's twenty keys (15 each), which share one lane", async () => {
    llm.reset()
    hold()
    const keys = await Promise.all(Array.from({ length: 20 }, async (_, i) => {
      const created = await server.request("/api/v1/admin/api-keys", {
        method: "POST",
        auth: admin.token,
        body: JSON.stringify({ name: `greedy ${i}`, scopes: ["llm:completions"] })
      })
      expect(created.status).toBe(201)
      return json(created)
    }))
    // Each key is its maker's: the API shows it, and the provider queue serves them as one caller.
    expect(new Set(keys.map((key) => key.owner_user_id))).toEqual(new Set([admin.id]))
    const calls = keys.flatMap((key) => Array.from({ length: 15 }, () => proxy(key.key)))
    await eventually(() => greedyAtProvider() >= greedyShare, "the greedy user's calls to take their share", 60_000)
    // Twenty lanes would take the reserve too (each key holding none may); one lane leaves it.
    expect(greedyAtProvider()).toBe(greedyShare)
    await patientChat()
    expect(greedyAtProvider()).toBe(greedyShare)

    release()
    const responses = await Promise.all(calls)
    // Under each key's cap (15 of 16): every call is served in the end.
    const failed = await Promise.all(responses.filter((response) => response.status !== 200).map((r) => r.text()))
    expect(failed).toEqual([])
  })
})
