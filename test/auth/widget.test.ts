/**
 * Widget tokens: minted over HTTP from a bot's key, used without a key lookup, bounded by that key's
 * scopes; tampered or expired tokens are refused. Expiry is also checked with Effect's TestClock
 * against the token service itself.
 */
import { it as effectIt } from "@effect/vitest"
import { Effect, Layer, Redacted, TestClock } from "effect"
import * as jose from "jose"
import * as crypto from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { rateSubject } from "../../src/access/Middleware.ts"
import { Tokens } from "../../src/access/Tokens.ts"
import { widgetLifetimeSeconds } from "../../src/access/widget/Widgets.ts"
import type { Scope } from "../../src/auth/Scopes.ts"
import { ServerSecret } from "../../src/secrets/ServerSecret.ts"
import { backends } from "../support/database.ts"
import { json, startServer, type TestServer } from "../support/server.ts"
import { createKey } from "./helpers.ts"

const JWT_SECRET = "widget-test-secret-0123456789-abcdefghij"
/** The key the server derives for widget tokens from JWT_SECRET (see ServerSecret.deriveKey). */
const widgetKey = new Uint8Array(crypto.hkdfSync("sha256", JWT_SECRET, "cairn", "jwt:widget", 32))

describe.each(backends)("widget tokens (%s)", (backend) => {
  let server: TestServer
  beforeAll(async () => {
    server = await startServer({ backend, env: { JWT_SECRET } })
  })
  afterAll(async () => {
    await server?.close()
  })

  const createBot = async (id: string, apiKeyId: string | null) => {
    const response = await server.request("/api/v1/admin/bots", {
      method: "POST",
      body: JSON.stringify({ id, name: `Bot ${id}`, api_key_id: apiKeyId })
    })
    expect(response.status).toBeLessThan(300)
  }
  const mint = (body: unknown, auth?: string) =>
    server.request("/api/v1/widget-auth/mint", { method: "POST", body: JSON.stringify(body), ...(auth ? { auth } : {}) })

  it("mints a 15-minute token carrying the bot key's scopes, usable within them only", async () => {
    const botKey = await createKey(server, ["bots:read", "sessions:read"])
    await createBot("helper", botKey.id)
    const before = Date.now()
    const response = await mint({ source_bot_id: "helper", pin_id: "pin-1" })
    const after = Date.now()
    expect(response.status).toBe(200)
    const minted = await json(response)
    expect(minted).toMatchObject({ bot_id: "helper", bot_name: "Bot helper", expires_in: widgetLifetimeSeconds })
    expect(minted.scopes.sort()).toEqual(["bots:read", "sessions:read"])
    // Its life counted from the mint, wherever the mint fell between the request and its answer.
    expect(Date.parse(minted.expires_at)).toBeGreaterThanOrEqual(before + widgetLifetimeSeconds * 1000 - 1_000)
    expect(Date.parse(minted.expires_at)).toBeLessThanOrEqual(after + widgetLifetimeSeconds * 1000 + 1_000)
    const claims = jose.decodeJwt(minted.token)
    expect(claims).toMatchObject({ kind: "widget", sub: "helper", pin_id: "pin-1", scopes: minted.scopes })

    const allowed = await server.request("/api/v1/admin/bots", { auth: minted.token })
    expect(allowed.status).toBe(200)
    const me = await json(await server.request("/auth/me", { auth: minted.token }))
    expect(me).toMatchObject({ kind: "widget", id: "helper" })
    const beyond = await server.request("/api/v1/admin/settings", { auth: minted.token })
    expect(beyond.status).toBe(403)
    expect(await json(beyond)).toEqual({ detail: "Missing required scope: settings:read" })
    // A widget cannot extend its own life by minting.
    const selfMint = await mint({ source_bot_id: "helper" }, minted.token)
    expect(selfMint.status).toBe(403)
  })

  it("is used without a key lookup: a revoked bot key stops new mints, not tokens already minted", async () => {
    const botKey = await createKey(server, ["bots:read"])
    await createBot("revoked-bot", botKey.id)
    const minted = await json(await mint({ source_bot_id: "revoked-bot" }))
    await server.request(`/api/v1/admin/api-keys/${botKey.id}`, { method: "DELETE" })
    expect((await server.request("/api/v1/admin/bots", { auth: minted.token })).status).toBe(200)
    const again = await mint({ source_bot_id: "revoked-bot" })
    expect(again.status).toBe(409)
  })

  it("never grants more than the caller holds or the bot's key allows", async () => {
    const botKey = await createKey(server, ["bots:read", "settings:write"])
    await createBot("strong", botKey.id)
    const weakCaller = await createKey(server, ["bots:read"])
    const refused = await mint({ source_bot_id: "strong" }, weakCaller.key)
    expect(refused.status).toBe(403)
    expect((await json(refused)).detail).toContain("settings:write")
    const noScope = await createKey(server, [])
    expect((await mint({ source_bot_id: "strong" }, noScope.key)).status).toBe(403)

    // The bot's key holds only bots:read: an admin caller still gets only that.
    const modest = await createKey(server, ["bots:read"])
    await createBot("modest", modest.id)
    const minted = await json(await mint({ source_bot_id: "modest" }))
    expect(minted.scopes).toEqual(["bots:read"])
    expect((await server.request("/api/v1/admin/api-keys", { auth: minted.token })).status).toBe(403)
  })

  it("answers a clear 4xx for a bot without a key and for an unknown bot", async () => {
    await createBot("keyless", null)
    const keyless = await mint({ source_bot_id: "keyless" })
    expect(keyless.status).toBe(409)
    expect((await json(keyless)).detail).toContain("no usable API key")
    const unknown = await mint({ source_bot_id: "no-such-bot" })
    expect(unknown.status).toBe(404)
    const invalid = await mint({})
    expect(invalid.status).toBe(422)
  })

  it("refuses tampered, foreign and expired tokens with 401", async () => {
    const botKey = await createKey(server, ["bots:read"])
    await createBot("tamper", botKey.id)
    const { token } = await json(await mint({ source_bot_id: "tamper" }))
    const [header, payload, signature] = token.split(".")
    const claims = JSON.parse(Buffer.from(payload, "base64url").toString())
    const widened = Buffer.from(JSON.stringify({ ...claims, scopes: ["admin"] })).toString("base64url")
    expect((await server.request("/api/v1/admin/bots", { auth: `${header}.${widened}.${signature}` })).status).toBe(401)
    const flipped = signature.slice(0, -2) + (signature.endsWith("AA") ? "BB" : "AA")
    expect((await server.request("/api/v1/admin/bots", { auth: `${header}.${payload}.${flipped}` })).status).toBe(401)
    const none = `${Buffer.from(JSON.stringify({ alg: "none", typ: "JWT" })).toString("base64url")}.${payload}.`
    expect((await server.request("/api/v1/admin/bots", { auth: none })).status).toBe(401)

    const now = Math.floor(Date.now() / 1000)
    const sign = (iat: number, exp: number, key: Uint8Array = widgetKey) =>
      new jose.SignJWT({ kind: "widget", scopes: ["bots:read"] })
        .setProtectedHeader({ alg: "HS256", typ: "JWT" })
        .setIssuer("cairn")
        .setAudience("cairn:widget")
        .setSubject("tamper")
        .setIssuedAt(iat)
        .setExpirationTime(exp)
        .sign(key)
    // A token signed with the server's widget key works while valid...
    expect((await server.request("/api/v1/admin/bots", { auth: await sign(now, now + 60) })).status).toBe(200)
    // ...and is refused once expired, or when signed with any other key.
    const expired = await server.request("/api/v1/admin/bots", { auth: await sign(now - 901, now - 1) })
    expect(expired.status).toBe(401)
    expect(await json(expired)).toEqual({ detail: "Invalid or expired credentials" })
    const foreign = await sign(now, now + 60, new Uint8Array(32).fill(7))
    expect((await server.request("/api/v1/admin/bots", { auth: foreign })).status).toBe(401)
  })

  it("rate-limits each widget token on its own, not every visitor of the bot together", async () => {
    const botKey = await createKey(server, ["bots:read"])
    await createBot("crowd", botKey.id)
    const first = await json(await mint({ source_bot_id: "crowd" }))
    const second = await json(await mint({ source_bot_id: "crowd" }))
    const [jtiA, jtiB] = [jose.decodeJwt(first.token).jti, jose.decodeJwt(second.token).jti]
    expect(jtiA).toMatch(/^[0-9a-f-]{36}$/)
    expect(jtiB).not.toBe(jtiA)

    // Tokens without a jti (none are minted so, but the server's key signs them) fall back to the address.
    const now = Math.floor(Date.now() / 1000)
    const noJti = (bot: string) =>
      new jose.SignJWT({ kind: "widget", scopes: ["bots:read"] })
        .setProtectedHeader({ alg: "HS256", typ: "JWT" })
        .setIssuer("cairn")
        .setAudience("cairn:widget")
        .setSubject(bot)
        .setIssuedAt(now)
        .setExpirationTime(now + 60)
        .sign(widgetKey)
    const [lone1, lone2] = [await noJti("lone-1"), await noJti("lone-2")]

    const bots = (token: string) => server.request("/api/v1/admin/bots", { auth: token })
    const settings = (values: Record<string, unknown>) =>
      server.request("/api/v1/admin/settings", { method: "PUT", body: JSON.stringify(values) })
    expect((await settings({ RATE_LIMIT_ENABLED: true, RATE_LIMIT_DEFAULT: "3/minute" })).status).toBe(200)
    try {
      for (let i = 0; i < 3; i++) expect((await bots(first.token)).status).toBe(200)
      expect((await bots(first.token)).status).toBe(429)
      // Another visitor of the same bot is not held back by the first one.
      expect((await bots(second.token)).status).toBe(200)

      for (let i = 0; i < 3; i++) expect((await bots(lone1)).status).toBe(200)
      expect((await bots(lone2)).status).toBe(429)
    } finally {
      expect((await settings({ RATE_LIMIT_ENABLED: false })).status).toBe(200)
    }
  })
})

const secretLayer = Layer.succeed(ServerSecret, {
  secret: Redacted.make(JWT_SECRET),
  deriveKey: (purpose: string) => Buffer.from(crypto.hkdfSync("sha256", JWT_SECRET, "cairn", purpose, 32))
})

describe("rate-limit subject", () => {
  it("keys widget principals by token id, else by client address; others by their subject", () => {
    const widget = (tokenId?: string) => ({
      kind: "widget" as const,
      id: "bot-a",
      scopes: new Set<Scope>(),
      ...(tokenId ? { tokenId } : {})
    })
    expect(rateSubject(widget("jti-1"), "10.0.0.1")).toBe("widget-token:jti-1")
    expect(rateSubject(widget("jti-2"), "10.0.0.1")).not.toBe(rateSubject(widget("jti-1"), "10.0.0.1"))
    expect(rateSubject(widget(), "10.0.0.1")).toBe("widget-ip:10.0.0.1")
    expect(rateSubject(widget(), "10.0.0.2")).not.toBe(rateSubject(widget(), "10.0.0.1"))
    expect(rateSubject({ kind: "user", id: "u1", scopes: new Set(), tokenId: "j" }, "10.0.0.1")).toBe("user:u1")
    expect(rateSubject({ kind: "static_key", id: "", scopes: new Set() }, "10.0.0.1")).toBe("static")
  })

  effectIt.effect("verified widget tokens carry their jti as the principal's token id", () =>
    Effect.gen(function*() {
      const tokens = yield* Tokens
      const signed = yield* tokens.sign("widget", "bot-a", ["chat"], widgetLifetimeSeconds)
      const verified = yield* tokens.verify(signed.token)
      expect(verified.principal.tokenId).toBe(jose.decodeJwt(signed.token).jti)
      expect(verified.principal.tokenId).toMatch(/^[0-9a-f-]{36}$/)
    }).pipe(Effect.provide(Tokens.Default.pipe(Layer.provide(secretLayer)))))
})

describe("widget token expiry (TestClock)", () => {
  effectIt.effect("is valid until 15 minutes after minting, then refused", () =>
    Effect.gen(function*() {
      const tokens = yield* Tokens
      yield* TestClock.setTime(Date.parse("2030-01-01T00:00:00Z"))
      const signed = yield* tokens.sign("widget", "bot-a", ["chat"], widgetLifetimeSeconds)
      expect(signed.expiresAt.toISOString()).toBe("2030-01-01T00:15:00.000Z")
      yield* TestClock.adjust("14 minutes")
      const verified = yield* tokens.verify(signed.token)
      expect(verified.principal).toMatchObject({ kind: "widget", id: "bot-a" })
      // chat grants approvals:write (the approvals of its own runs).
      expect([...verified.principal.scopes]).toEqual(["chat", "approvals:write"])
      yield* TestClock.adjust("59 seconds")
      expect((yield* tokens.verify(signed.token)).principal.id).toBe("bot-a")
      yield* TestClock.adjust("1 second")
      const error = yield* Effect.flip(tokens.verify(signed.token))
      expect(error._tag).toBe("Unauthorized")
    }).pipe(Effect.provide(Tokens.Default.pipe(Layer.provide(secretLayer)))))

  effectIt.effect("a widget token is not accepted as a user token and the reverse", () =>
    Effect.gen(function*() {
      const tokens = yield* Tokens
      const user = yield* tokens.sign("user", "u1", ["admin"], 3600)
      const [, payload] = user.token.split(".")
      const claims = JSON.parse(Buffer.from(payload!, "base64url").toString())
      // Relabelling a user token as a widget one breaks its signature under the widget key.
      const relabelled = Buffer.from(JSON.stringify({ ...claims, kind: "widget" })).toString("base64url")
      const parts = user.token.split(".")
      const error = yield* Effect.flip(tokens.verify(`${parts[0]}.${relabelled}.${parts[2]}`))
      expect(error._tag).toBe("Unauthorized")
    }).pipe(Effect.provide(Tokens.Default.pipe(Layer.provide(secretLayer)))))
})
