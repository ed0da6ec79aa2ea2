/**
 * The lockout's source and its locks (issue 62, item 6): which address a request counts against
 * (X-Forwarded-For only through the proxies TRUSTED_PROXIES names; an IPv6 client by its /64), and,
 * through the API on both databases, locks that double at each lapse and a success that takes its
 * own attempt back.
 */
import { ConfigProvider, Effect, Either, Layer } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { ClientAddress, clientOf, parseTrustedProxies } from "../../src/access/ClientAddress.ts"
import { guessingSource } from "../../src/access/users/SignInGuard.ts"
import { backends } from "../support/database.ts"
import { startServer, type TestServer } from "../support/server.ts"
import { eventually } from "../support/time.ts"
import { signIn, trustLocalProxy } from "./bursts.ts"

const trusted = (raw: string) => Either.getOrThrow(parseTrustedProxies(raw))

describe("the client address", () => {
  it("believes X-Forwarded-For only from a trusted proxy, read from the right", () => {
    const none = trusted("")
    expect(clientOf(none, "10.0.0.5", "203.0.113.1")).toBe("10.0.0.5")
    const proxies = trusted("10.0.0.0/8, ::1")
    expect(clientOf(proxies, "10.0.0.5", undefined)).toBe("10.0.0.5")
    expect(clientOf(proxies, "10.0.0.5", "203.0.113.1")).toBe("203.0.113.1")
    expect(clientOf(proxies, "::ffff:10.0.0.5", "203.0.113.1")).toBe("203.0.113.1")
    expect(clientOf(proxies, "::1", "203.0.113.1")).toBe("203.0.113.1")
    // Two trusted proxies in a row: the client is the hop before them; what the client wrote
    // before that (a forged first entry) is not read.
    expect(clientOf(proxies, "10.0.0.5", "198.51.100.9, 203.0.113.1, 10.1.1.1")).toBe("203.0.113.1")
    // A peer that is not trusted is the client, whatever the header says.
    expect(clientOf(proxies, "192.0.2.7", "203.0.113.1")).toBe("192.0.2.7")
    // A hop that is no address is what the trusted proxy said, and ends the walk.
    expect(clientOf(proxies, "10.0.0.5", "junk")).toBe("junk")
  })

  it("refuses a TRUSTED_PROXIES entry that is no address or range, naming the setting", async () => {
    for (const raw of ["proxy.example", "10.0.0.0/33", "10.0.0.1/8/8", "::1/129"]) {
      expect(Either.isLeft(parseTrustedProxies(raw))).toBe(true)
      const built = Effect.runPromise(
        Effect.provide(
          ClientAddress,
          ClientAddress.Default.pipe(Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map([["TRUSTED_PROXIES", raw]])))))
        )
      )
      await expect(built).rejects.toThrow(/TRUSTED_PROXIES/)
    }
  })

  it("counts an IPv4 address as itself (also when mapped into IPv6) and an IPv6 address by its /64", () => {
    expect(guessingSource("203.0.113.1")).toBe("203.0.113.1")
    expect(guessingSource("::ffff:203.0.113.1")).toBe("203.0.113.1")
    expect(guessingSource("2001:db8:1:2::1")).toBe("2001:0db8:0001:0002::/64")
    expect(guessingSource("2001:db8:1:2:ffff:1:2:3")).toBe("2001:0db8:0001:0002::/64")
    expect(guessingSource("::1")).toBe("0000:0000:0000:0000::/64")
    expect(guessingSource("unknown")).toBe("unknown")
  })
})

describe.each(backends)("the lockout's locks (%s)", (backend) => {
  let server: TestServer
  const owner = { username: "root", password: "correct horse battery staple" }

  beforeAll(async () => {
    server = await startServer({ backend, env: { ...trustLocalProxy, SIGNIN_FIRST_LOCK_SECONDS: "2" } })
    expect((await server.request("/auth/setup", { method: "POST", body: JSON.stringify(owner) })).status).toBe(201)
  })
  afterAll(async () => {
    await server?.close()
  })

  it("locks a source for the first lock after the free failures, then twice as long after each failure once it lapses", async () => {
    const from = "203.0.113.90"
    for (let i = 0; i < 5; i++) expect((await signIn(server.request, from, owner.username, "wrong")).status).toBe(401)
    const locked = await signIn(server.request, from, owner.username, "wrong")
    expect(locked.status).toBe(429)
    expect(Number(locked.headers.get("retry-after"))).toBeGreaterThanOrEqual(1)
    expect(Number(locked.headers.get("retry-after"))).toBeLessThanOrEqual(2)
    // Refused guesses are not counted; once the lock lapses, the next guess runs and doubles it.
    await eventually(async () => (await signIn(server.request, from, owner.username, "wrong")).status === 401, "the lock to lapse")
    const doubled = await signIn(server.request, from, owner.username, "wrong")
    expect(doubled.status).toBe(429)
    // Four seconds now: more than the whole first lock is left.
    expect(Number(doubled.headers.get("retry-after"))).toBeGreaterThanOrEqual(3)
    expect(Number(doubled.headers.get("retry-after"))).toBeLessThanOrEqual(4)
  })

  it("takes a successful sign-in's own attempt back: failures before it still count, and no lock is left", async () => {
    const from = "203.0.113.91"
    for (let i = 0; i < 3; i++) expect((await signIn(server.request, from, owner.username, "wrong")).status).toBe(401)
    expect((await signIn(server.request, from, owner.username, owner.password)).status).toBe(200)
    // Three failures stand: two more are free, the sixth attempt is locked.
    expect((await signIn(server.request, from, owner.username, "wrong")).status).toBe(401)
    expect((await signIn(server.request, from, owner.username, "wrong")).status).toBe(401)
    expect((await signIn(server.request, from, owner.username, "wrong")).status).toBe(429)
  })
})
