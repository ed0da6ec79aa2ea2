/**
 * Exact counters and a lockout that cannot lock the owner out (issue 62, items 5 and 6), on both
 * databases: a burst of 50 parallel requests never gets more than the limit through, whether the
 * limit is the sign-in lockout, a credential's running runs or a rate limit; and the lockout holds
 * the guessing source, not the account: a stranger's guesses leave the owner's sign-in alone.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createKey } from "../auth/helpers.ts"
import { type FakeLlm, fakeLlmEnv, startFakeLlm } from "../fixtures/fakeLlm.ts"
import { backends } from "../support/database.ts"
import { json, startServer, type TestServer } from "../support/server.ts"
import { count, signIn, streamStatus, trustLocalProxy } from "./bursts.ts"

const owner = { username: "owner", password: "correct horse battery staple" }

describe.each(backends)("exact counters (%s)", (backend) => {
  let server: TestServer
  let llm: FakeLlm

  beforeAll(async () => {
    llm = await startFakeLlm({ defaultReply: { text: "ok" } })
    // The first lock outlasts every test here, so no lock lapses while a burst is answered.
    server = await startServer({
      backend,
      env: { ...fakeLlmEnv(llm), ...trustLocalProxy, SIGNIN_FIRST_LOCK_SECONDS: "600", LLM_MAX_RETRIES: "0" }
    })
    expect((await server.request("/auth/setup", { method: "POST", body: JSON.stringify(owner) })).status).toBe(201)
  })
  afterAll(async () => {
    await server?.close()
    await llm?.close()
  })

  const settings = async (values: Record<string, unknown>) =>
    expect((await server.request("/api/v1/admin/settings", { method: "PUT", body: JSON.stringify(values) })).status).toBe(200)

  it("answers exactly 5 of 50 parallel wrong passwords from one source 401, and the other 45 429 with Retry-After", async () => {
    const burst = await Promise.all(
      Array.from({ length: 50 }, (_, i) => signIn(server.request, "203.0.113.50", owner.username, `guess ${i}`))
    )
    const statuses = burst.map((response) => response.status)
    expect(count(statuses, 401)).toBe(5)
    expect(count(statuses, 429)).toBe(45)
    for (const refused of burst.filter((response) => response.status === 429)) {
      const wait = Number(refused.headers.get("retry-after"))
      expect(wait).toBeGreaterThanOrEqual(1)
      expect(wait).toBeLessThanOrEqual(600)
      expect(await json(refused)).toEqual({ detail: "Too many failed attempts; try again later" })
    }
    // The locked source is told when to retry, even with the right password.
    const right = await signIn(server.request, "203.0.113.50", owner.username, owner.password)
    expect(right.status).toBe(429)
    expect(Number(right.headers.get("retry-after"))).toBeGreaterThanOrEqual(1)
  })

  it("lets the owner sign in from another address while a stranger's guesses have locked the stranger out", async () => {
    // A stranger guesses at the owner's account until locked, and keeps at it.
    const guesses = []
    for (let i = 0; i < 12; i++) guesses.push((await signIn(server.request, "198.51.100.66", owner.username, `nope ${i}`)).status)
    expect(guesses).toEqual([...Array<number>(5).fill(401), ...Array<number>(7).fill(429)])

    // The owner, from their own address, is not held by any of it: a typo, then the right password.
    expect((await signIn(server.request, "192.0.2.10", owner.username, "typo")).status).toBe(401)
    const signedIn = await signIn(server.request, "192.0.2.10", owner.username, owner.password)
    expect(signedIn.status).toBe(200)
    expect((await json(signedIn)).user.username).toBe(owner.username)
    // The stranger is still locked out.
    expect((await signIn(server.request, "198.51.100.66", owner.username, owner.password)).status).toBe(429)
  })

  it("counts an IPv6 client by its /64, and ignores X-Forwarded-For from a peer that is not a trusted proxy", async () => {
    for (let i = 0; i < 5; i++) {
      expect((await signIn(server.request, `2001:db8:1:2::${i + 1}`, owner.username, "wrong")).status).toBe(401)
    }
    // Another address of the same /64 is the same source; another /64 is not.
    expect((await signIn(server.request, "2001:db8:1:2:ffff::9", owner.username, "wrong")).status).toBe(429)
    expect((await signIn(server.request, "2001:db8:1:3::1", owner.username, owner.password)).status).toBe(200)
    // A forwarded address is believed only from a trusted proxy: here the chain's last hop
    // (203.0.113.50, locked above) is not one, so it is the client, whatever it says came before.
    expect((await signIn(server.request, "192.0.2.10, 203.0.113.50", owner.username, owner.password)).status).toBe(429)
  })

  it("runs exactly RUNS_PER_CREDENTIAL_MAX of a credential's 50 parallel messages, and refuses the rest with 429 and Retry-After", async () => {
    await settings({ RUNS_PER_CREDENTIAL_MAX: 5 })
    // The model never answers: every run admitted holds its place until it is cancelled.
    llm.setDefaultReply({ hang: true })
    const key = await createKey(server, ["chat"])
    const burst = await Promise.all(Array.from({ length: 50 }, () => streamStatus(server.request, key.key)))
    expect(count(burst.map((r) => r.status), 200)).toBe(5)
    const refused = burst.filter((r) => r.status === 429)
    expect(refused).toHaveLength(45)
    for (const r of refused) {
      expect(r.retryAfter).toBe("1")
      expect(r.detail).toBe("This credential already has 5 runs running (RUNS_PER_CREDENTIAL_MAX); retry when one has finished")
    }
    // Another credential is not held by it.
    const other = await createKey(server, ["chat"])
    const theirs = await streamStatus(server.request, other.key)
    expect(theirs.status).toBe(200)

    // A cancelled run gives its place back: then exactly one more runs.
    const first = burst.find((r) => r.status === 200)!
    const cancel = await server.request("/chat/cancel", {
      method: "POST",
      body: JSON.stringify({ client_id: "-", session_id: first.session })
    })
    expect((await json(cancel)).cancelled).toBe(true)
    const after = await Promise.all(Array.from({ length: 10 }, () => streamStatus(server.request, key.key)))
    expect(count(after.map((r) => r.status), 200)).toBe(1)
    expect(count(after.map((r) => r.status), 429)).toBe(9)

    // Leave nothing running for the next test.
    for (const r of [...burst, ...after, theirs].filter((r) => r.status === 200)) {
      await server.request("/chat/cancel", { method: "POST", body: JSON.stringify({ client_id: "-", session_id: r.session }) })
    }
    llm.setDefaultReply({ text: "ok" })
  })

  it("lets exactly the chat rate limit's 5 of 50 parallel messages through, and refuses the rest with 429 and Retry-After", async () => {
    await settings({ RUNS_PER_CREDENTIAL_MAX: 100, RATE_LIMIT_ENABLED: true, RATE_LIMIT_CHAT: "5/hour" })
    try {
      const key = await createKey(server, ["chat"])
      const burst = await Promise.all(Array.from({ length: 50 }, () => streamStatus(server.request, key.key)))
      expect(count(burst.map((r) => r.status), 200)).toBe(5)
      const refused = burst.filter((r) => r.status === 429)
      expect(refused).toHaveLength(45)
      for (const r of refused) {
        expect(r.detail).toBe("Too many requests")
        expect(Number(r.retryAfter)).toBeGreaterThanOrEqual(1)
      }
    } finally {
      await settings({ RATE_LIMIT_ENABLED: false })
    }
  })
})
