/** Users over HTTP: first-admin setup, local login, refresh rotation and reuse, logout, /auth/me, admin. */
import * as crypto from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { memberScopes } from "../../src/auth/Scopes.ts"
import { backends } from "../support/database.ts"
import { json, startServer, type TestServer } from "../support/server.ts"
import { createKey } from "./helpers.ts"

describe.each(backends)("users and sessions (%s)", (backend) => {
  let server: TestServer
  beforeAll(async () => {
    // These tests fail sign-ins on purpose, all from one address: the guard is tested on its own below.
    server = await startServer({ backend, env: { SIGNIN_FREE_FAILURES: "100" } })
  })
  afterAll(async () => {
    await server?.close()
  })

  const post = (path: string, body: unknown, auth: string | null = null) =>
    server.request(path, { method: "POST", body: JSON.stringify(body), auth })

  it("sets up the first admin once, then logs in, refreshes with rotation and logs out", async () => {
    const before = await json(await server.request("/auth/status", { auth: null }))
    expect(before).toEqual({ setup_required: true, setup_credential: "api_key", local_login: true, oidc_enabled: false })

    const short = await post("/auth/setup", { username: "root", password: "short" }, server.apiKey)
    expect(short.status).toBe(422)
    expect((await json(short)).detail[0].loc).toEqual(["body", "password"])

    // With API_KEY configured, an empty users table is not open to whoever reaches the port.
    const requiresKey = {
      detail:
        "That is not the server's API key. Creating the first admin needs the API_KEY the server was started with (as the bearer token)."
    }
    const anonymous = await post("/auth/setup", { username: "intruder", password: "correct horse battery" })
    expect(anonymous.status).toBe(401)
    expect(await json(anonymous)).toEqual(requiresKey)
    const wrongKey = await post("/auth/setup", { username: "intruder", password: "correct horse battery" }, "not-the-key")
    expect(wrongKey.status).toBe(401)
    expect(await json(wrongKey)).toEqual(requiresKey)
    const scopedAdminKey = await createKey(server, ["admin"])
    const otherCredential = await post("/auth/setup", { username: "intruder", password: "correct horse battery" }, scopedAdminKey.key)
    expect(otherCredential.status).toBe(401)
    const basic = await server.request("/auth/setup", {
      method: "POST",
      auth: null,
      headers: { authorization: `Basic ${Buffer.from(`x:${server.apiKey}`).toString("base64")}` },
      body: JSON.stringify({ username: "intruder", password: "correct horse battery" })
    })
    expect(basic.status).toBe(401)
    expect((await json(await server.request("/auth/status", { auth: null }))).setup_required).toBe(true)

    const setup = await post("/auth/setup", { username: "root", password: "correct horse battery" }, server.apiKey)
    expect(setup.status).toBe(201)
    const first = await json(setup)
    expect(first).toMatchObject({ token_type: "bearer", expires_in: 3600, user: { username: "root", role: "admin" } })
    expect(first.access_token.split(".")).toHaveLength(3)
    expect(first.refresh_token).toMatch(/^rt_/)

    const again = await post("/auth/setup", { username: "other", password: "correct horse battery" }, server.apiKey)
    expect(again.status).toBe(409)
    expect((await post("/auth/setup", { username: "other", password: "correct horse battery" })).status).toBe(401)
    expect((await json(await server.request("/auth/status", { auth: null }))).setup_required).toBe(false)

    // The admin's access token works on admin routes.
    const settings = await server.request("/api/v1/admin/settings", { auth: first.access_token })
    expect(settings.status).toBe(200)
    const me = await json(await server.request("/auth/me", { auth: first.access_token }))
    expect(me).toMatchObject({ kind: "user", id: first.user.id, scopes: ["admin"], user: { username: "root" } })

    const wrong = await post("/auth/login", { username: "root", password: "wrong password" })
    expect(wrong.status).toBe(401)
    expect(await json(wrong)).toEqual({ detail: "Invalid username or password" })
    const nobody = await post("/auth/login", { username: "nobody", password: "wrong password" })
    expect(nobody.status).toBe(401)

    const login = await post("/auth/login", { username: "ROOT", password: "correct horse battery" })
    expect(login.status).toBe(200)
    const session = await json(login)

    // Rotation: each refresh token works once and answers the next.
    const r1 = await post("/auth/refresh", { refresh_token: session.refresh_token })
    expect(r1.status).toBe(200)
    const second = await json(r1)
    expect(second.refresh_token).not.toBe(session.refresh_token)
    expect((await server.request("/auth/me", { auth: second.access_token })).status).toBe(200)

    // Reuse of the spent token revokes the family: the newest token stops working too.
    const reuse = await post("/auth/refresh", { refresh_token: session.refresh_token })
    expect(reuse.status).toBe(401)
    const afterReuse = await post("/auth/refresh", { refresh_token: second.refresh_token })
    expect(afterReuse.status).toBe(401)

    // The setup session is a separate family and still works; logout ends it.
    const r2 = await post("/auth/refresh", { refresh_token: first.refresh_token })
    expect(r2.status).toBe(200)
    const third = await json(r2)
    const logout = await post("/auth/logout", { refresh_token: third.refresh_token })
    expect(logout.status).toBe(204)
    expect((await post("/auth/refresh", { refresh_token: third.refresh_token })).status).toBe(401)
    expect((await post("/auth/refresh", { refresh_token: "rt_made_up" })).status).toBe(401)
  })

  it("answers a race to create the same user with one 201 and 409s, never a 500", async () => {
    const attempts = await Promise.all(
      Array.from(
        { length: 6 },
        () =>
          server.request("/api/v1/admin/users", {
            method: "POST",
            body: JSON.stringify({ username: "racer", password: "racing password" })
          })
      )
    )
    const statuses = attempts.map((response) => response.status).sort()
    expect(statuses).toEqual([201, 409, 409, 409, 409, 409])
    for (const response of attempts.filter((r) => r.status === 409)) expect(typeof (await json(response)).detail).toBe("string")
  })

  it("admins manage users; members hold the member preset and nothing more", async () => {
    const created = await server.request("/api/v1/admin/users", {
      method: "POST",
      body: JSON.stringify({ username: "mia", password: "member password", email: "mia@example.test" })
    })
    expect(created.status).toBe(201)
    const mia = await json(created)
    expect(mia).toMatchObject({ username: "mia", role: "member", login: ["password"] })
    expect(JSON.stringify(mia)).not.toContain("member password")
    const duplicate = await server.request("/api/v1/admin/users", {
      method: "POST",
      body: JSON.stringify({ username: "Mia", password: "member password" })
    })
    expect(duplicate.status).toBe(409)

    const session = await json(await post("/auth/login", { username: "mia", password: "member password" }))
    const me = await json(await server.request("/auth/me", { auth: session.access_token }))
    expect(me.scopes).toEqual(expect.arrayContaining([...memberScopes]))
    expect(me.scopes).not.toContain("admin")
    const forbidden = await server.request("/api/v1/admin/users", { auth: session.access_token })
    expect(forbidden.status).toBe(403)
    expect(await json(forbidden)).toEqual({ detail: "Missing required scope: users:read" })

    const list = await json(await server.request("/api/v1/admin/users"))
    expect(list.users.map((u: { username: string }) => u.username)).toEqual(expect.arrayContaining(["root", "mia"]))
    expect(JSON.stringify(list)).not.toContain("scrypt")

    const promoted = await server.request(`/api/v1/admin/users/${mia.id}`, {
      method: "PATCH",
      body: JSON.stringify({ role: "admin" })
    })
    expect((await json(promoted)).role).toBe("admin")
    const refreshed = await json(await post("/auth/refresh", { refresh_token: session.refresh_token }))
    expect((await json(await server.request("/auth/me", { auth: refreshed.access_token }))).scopes).toEqual(["admin"])

    const removed = await server.request(`/api/v1/admin/users/${mia.id}`, { method: "DELETE" })
    expect(removed.status).toBe(204)
    // Deleting a user ends their sessions (refresh tokens go with the user).
    expect((await post("/auth/refresh", { refresh_token: refreshed.refresh_token })).status).toBe(401)
    expect((await post("/auth/login", { username: "mia", password: "member password" })).status).toBe(401)
  })

  it("lets users:write manage members but not make, unmake or take over an admin", async () => {
    const manager = await createKey(server, ["users:read", "users:write"])
    const asManager = (path: string, method: string, body?: unknown) =>
      server.request(path, { method, auth: manager.key, ...(body === undefined ? {} : { body: JSON.stringify(body) }) })
    const needsAdmin = { detail: "Missing required scope: admin" }
    const users = async () =>
      (await json(await server.request("/api/v1/admin/users"))).users as Array<{ id: string; username: string; role: string }>
    const root = (await users()).find((u) => u.username === "root")!
    expect(root.role).toBe("admin")

    const adminCreate = await asManager("/api/v1/admin/users", "POST", { username: "sneaky", password: "sneaky password", role: "admin" })
    expect(adminCreate.status).toBe(403)
    expect(await json(adminCreate)).toEqual(needsAdmin)
    expect((await users()).map((u) => u.username)).not.toContain("sneaky")

    const member = await asManager("/api/v1/admin/users", "POST", { username: "max", password: "member password" })
    expect(member.status).toBe(201)
    const max = await json(member)
    expect(max.role).toBe("member")

    const promote = await asManager(`/api/v1/admin/users/${max.id}`, "PATCH", { role: "admin" })
    expect(promote.status).toBe(403)
    expect(await json(promote)).toEqual(needsAdmin)
    const takeOver = await asManager(`/api/v1/admin/users/${root.id}`, "PATCH", { password: "taken over password" })
    expect(takeOver.status).toBe(403)
    expect(await json(takeOver)).toEqual(needsAdmin)
    const demote = await asManager(`/api/v1/admin/users/${root.id}`, "PATCH", { role: "member" })
    expect(demote.status).toBe(403)
    expect(await json(demote)).toEqual(needsAdmin)
    const removeAdmin = await asManager(`/api/v1/admin/users/${root.id}`, "DELETE")
    expect(removeAdmin.status).toBe(403)
    expect(await json(removeAdmin)).toEqual(needsAdmin)

    // Nothing changed: max is still a member, root still an admin with the old password.
    expect((await users()).find((u) => u.id === max.id)!.role).toBe("member")
    expect((await users()).find((u) => u.id === root.id)!.role).toBe("admin")
    expect((await post("/auth/login", { username: "root", password: "correct horse battery" })).status).toBe(200)
    expect((await post("/auth/login", { username: "root", password: "taken over password" })).status).toBe(401)

    // Members stay in reach of users:write; unknown ids are still 404.
    const reset = await asManager(`/api/v1/admin/users/${max.id}`, "PATCH", { password: "new member password" })
    expect(reset.status).toBe(200)
    expect((await post("/auth/login", { username: "max", password: "new member password" })).status).toBe(200)
    const missing = await asManager("/api/v1/admin/users/00000000-0000-4000-8000-000000000000", "PATCH", { role: "admin" })
    expect(missing.status).toBe(404)

    // A caller holding admin (a user's token here) may do all of it.
    const rootSession = await json(await post("/auth/login", { username: "root", password: "correct horse battery" }))
    const byAdmin = await server.request(`/api/v1/admin/users/${max.id}`, {
      method: "PATCH",
      auth: rootSession.access_token,
      body: JSON.stringify({ role: "admin" })
    })
    expect(byAdmin.status).toBe(200)
    expect((await json(byAdmin)).role).toBe("admin")
    expect((await asManager(`/api/v1/admin/users/${max.id}`, "DELETE")).status).toBe(403)
    expect((await server.request(`/api/v1/admin/users/${max.id}`, { method: "DELETE", auth: rootSession.access_token })).status).toBe(204)
  })

  it("answers 404 on the OpenID routes when no provider is configured", async () => {
    const start = await server.request("/auth/oidc/start", { auth: null, redirect: "manual" })
    expect(start.status).toBe(404)
    expect((await json(start)).detail).toContain("OIDC_ISSUER")
    expect((await server.request("/auth/oidc/callback?code=x&state=y", { auth: null })).status).toBe(404)
  })

  it("rejects a tampered user token and one signed with another secret", async () => {
    const session = await json(await post("/auth/login", { username: "root", password: "correct horse battery" }))
    const [header, payload, signature] = session.access_token.split(".")
    const claims = JSON.parse(Buffer.from(payload, "base64url").toString())
    const forged = Buffer.from(JSON.stringify({ ...claims, sub: "00000000-0000-4000-8000-000000000000" })).toString("base64url")
    const tampered = await server.request("/auth/me", { auth: `${header}.${forged}.${signature}` })
    expect(tampered.status).toBe(401)
    const garbage = await server.request("/auth/me", { auth: "a.b.c" })
    expect(garbage.status).toBe(401)
  })
})

describe.each(backends)("first-admin setup without API_KEY (%s)", (backend) => {
  const secret = "users-test-jwt-secret-0123456789abcdefgh"
  // The code the server derives from its secret (see Users.setupCodeOf), as an operator reads it in the log.
  const setupCode = Buffer.from(crypto.hkdfSync("sha256", secret, "cairn", "setup-code", 32)).toString("base64url").slice(0, 20)
  const logLines: Array<string> = []
  let server: TestServer
  beforeAll(async () => {
    server = await startServer({ backend, env: { API_KEY: "", JWT_SECRET: secret }, onLog: (line) => logLines.push(line) })
  })
  afterAll(async () => {
    await server?.close()
  })

  it("prints a setup code at start, and only its holder claims the first admin, once", async () => {
    expect(logLines.some((line) => line.includes(`setup code ${setupCode}`))).toBe(true)
    const body = (username: string) => JSON.stringify({ username, password: "correct horse battery" })
    const status = await json(await server.request("/auth/status", { auth: null }))
    expect(status).toMatchObject({ setup_required: true, setup_credential: "setup_code" })
    // Whoever reaches the port first without the code gets nothing.
    const anonymous = await server.request("/auth/setup", { method: "POST", auth: null, body: body("intruder") })
    expect(anonymous.status).toBe(401)
    expect((await json(anonymous)).detail).toContain("setup code")
    expect((await server.request("/auth/setup", { method: "POST", auth: "not-the-code", body: body("intruder") })).status).toBe(401)
    expect((await json(await server.request("/auth/status", { auth: null }))).setup_required).toBe(true)

    const first = await server.request("/auth/setup", { method: "POST", auth: setupCode, body: body("root") })
    expect(first.status).toBe(201)
    expect((await json(first)).user).toMatchObject({ username: "root", role: "admin" })
    const second = await server.request("/auth/setup", { method: "POST", auth: setupCode, body: body("late") })
    expect(second.status).toBe(409)
    expect(await json(second)).toEqual({ detail: "Setup is already complete: a user exists" })
    // The test harness's static key means nothing to this server.
    expect((await server.request("/auth/me")).status).toBe(401)
  })
})

describe.each(backends)("password guessing (%s)", (backend) => {
  let server: TestServer
  beforeAll(async () => {
    // The general rate limit is off (the default): the guard holds regardless. The first lock
    // outlasts the test: with the 1 s default, a machine busy with other work (answering the burst's
    // thirty requests a fifth of a second apart) lets the lock lapse mid-burst, and the next guess then
    // rightly runs (test/auth/signInGuard.test.ts has the lapses, on the test clock).
    server = await startServer({ backend, env: { SIGNIN_FIRST_LOCK_SECONDS: "600" } })
    await server.request("/auth/setup", { method: "POST", body: JSON.stringify({ username: "root", password: "correct horse battery" }) })
  })
  afterAll(async () => {
    await server?.close()
  })

  const login = (username: string, password: string) =>
    server.request("/auth/login", { method: "POST", auth: null, body: JSON.stringify({ username, password }) })

  it("lets a few failures through, then locks the address and the username with a Retry-After", async () => {
    // A burst of parallel guesses: only the free few reach the password hash.
    const burst = await Promise.all(Array.from({ length: 30 }, (_, i) => login("root", `guess number ${i}`)))
    const statuses = burst.map((response) => response.status)
    expect(statuses.filter((status) => status === 401)).toHaveLength(5)
    expect(statuses.filter((status) => status === 429)).toHaveLength(25)
    const locked = burst.find((response) => response.status === 429)!
    expect(Number(locked.headers.get("retry-after"))).toBeGreaterThanOrEqual(1)
    expect(Number(locked.headers.get("retry-after"))).toBeLessThanOrEqual(600)
    expect(await json(locked)).toEqual({ detail: "Too many failed attempts; try again later" })
    // While locked, even the right password waits, and so does another name from this address.
    expect((await login("root", "correct horse battery")).status).toBe(429)
    expect((await login("someone", "correct horse battery")).status).toBe(429)
    // Setup guesses from this address count too.
    expect(
      (await server.request("/auth/setup", {
        method: "POST",
        auth: "guess",
        body: JSON.stringify({ username: "x", password: "correct horse battery" })
      })).status
    ).toBe(429)
  })
})
