/**
 * OpenID Connect login end to end against a real provider (oidc-provider) on loopback: start,
 * the provider's login and consent, the callback with code exchange and ID token verification,
 * users linked or created, and the failures (replayed or forged state, refused login).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { expandScopes, memberScopes } from "../../src/auth/Scopes.ts"
import { followUntil, type OidcProviderFixture, startOidcProvider } from "../fixtures/oidcProvider.ts"
import { backends } from "../support/database.ts"
import { freePort, json, startServer, type TestServer } from "../support/server.ts"

describe.each(backends)("OpenID Connect login (%s)", (backend) => {
  let server: TestServer
  let provider: OidcProviderFixture
  let callbackUrl: string
  beforeAll(async () => {
    const port = await freePort()
    callbackUrl = `http://127.0.0.1:${port}/auth/oidc/callback`
    provider = await startOidcProvider({
      redirectUri: callbackUrl,
      accounts: {
        "alice-sub": { email: "alice@example.test", email_verified: true, name: "Alice", preferred_username: "alice" },
        "bob-sub": { email: "bob@example.test", email_verified: true, name: "Bob" },
        "mallory-sub": { email: "root@example.test", email_verified: false, preferred_username: "mallory" }
      }
    })
    server = await startServer({
      backend,
      env: {
        PORT: String(port),
        OIDC_ISSUER: provider.issuer,
        OIDC_CLIENT_ID: provider.clientId,
        OIDC_CLIENT_SECRET: provider.clientSecret,
        OIDC_REDIRECT_URI: callbackUrl
      }
    })
  })
  afterAll(async () => {
    await server?.close()
    await provider?.close()
  })

  /** A browser's trip: cairn's start → provider → back to the callback; answers the callback URL. */
  const loginAs = async (account: string | null) => {
    provider.loginAs = account
    const start = await server.request("/auth/oidc/start", { auth: null, redirect: "manual" })
    expect(start.status).toBe(302)
    const authorize = new URL(start.headers.get("location")!)
    expect(authorize.origin).toBe(provider.issuer)
    expect(authorize.searchParams.get("code_challenge_method")).toBe("S256")
    expect(authorize.searchParams.get("state")?.length).toBeGreaterThan(20)
    expect(authorize.searchParams.get("nonce")?.length).toBeGreaterThan(20)
    return followUntil(authorize.href, callbackUrl)
  }
  const complete = (callback: URL) => server.request(`/auth/oidc/callback${callback.search}`, { auth: null })

  it("reports OpenID login as enabled", async () => {
    expect(await json(await server.request("/auth/status", { auth: null }))).toMatchObject({ oidc_enabled: true })
  })

  it("signs a new user in, creates them once, and links the same identity on the next login", async () => {
    const setup = await server.request("/auth/setup", {
      method: "POST",
      body: JSON.stringify({ username: "root", password: "root password 123", email: "root@example.test" })
    })
    expect(setup.status).toBe(201)

    const callback = await loginAs("alice-sub")
    expect(callback.searchParams.get("code")).toBeTruthy()
    const response = await complete(callback)
    expect(response.status).toBe(200)
    const tokens = await json(response)
    expect(tokens.user).toMatchObject({ username: "alice", email: "alice@example.test", role: "member", login: ["oidc"] })
    const me = await json(await server.request("/auth/me", { auth: tokens.access_token }))
    expect(me).toMatchObject({ kind: "user", id: tokens.user.id })
    expect(me.scopes).toEqual([...expandScopes(memberScopes)].sort())

    // The callback's state is single use: replaying it is refused.
    const replay = await complete(callback)
    expect(replay.status).toBe(401)

    const again = await json(await complete(await loginAs("alice-sub")))
    expect(again.user.id).toBe(tokens.user.id)
    // The refresh token from an OpenID login works like any other.
    const refreshed = await server.request("/auth/refresh", {
      method: "POST",
      auth: null,
      body: JSON.stringify({ refresh_token: again.refresh_token })
    })
    expect(refreshed.status).toBe(200)
  })

  it("links a local user with the same verified e-mail, never an unverified one", async () => {
    const created = await json(
      await server.request("/api/v1/admin/users", {
        method: "POST",
        body: JSON.stringify({ username: "bob", password: "bob password 123", email: "bob@example.test" })
      })
    )
    const bob = await json(await complete(await loginAs("bob-sub")))
    expect(bob.user.id).toBe(created.id)
    expect(bob.user.login).toEqual(["password", "oidc"])

    // An unverified address matching the admin's gets a new member account, not the admin's.
    const mallory = await json(await complete(await loginAs("mallory-sub")))
    expect(mallory.user.username).toBe("mallory")
    expect(mallory.user.role).toBe("member")
    const users = await json(await server.request("/api/v1/admin/users"))
    const root = users.users.find((u: { username: string }) => u.username === "root")
    expect(root.login).toEqual(["password"])
  })

  it("refuses a forged state, a missing code and a login the provider refused", async () => {
    const callback = await loginAs("alice-sub")
    const forged = new URL(callback)
    forged.searchParams.set("state", "not-the-state")
    const forgedResponse = await complete(forged)
    expect(forgedResponse.status).toBe(401)
    expect((await json(forgedResponse)).detail).toBe("Unknown or expired OpenID login state")
    expect((await server.request("/auth/oidc/callback?state=x", { auth: null })).status).toBe(401)

    const refused = await loginAs(null)
    expect(refused.searchParams.get("error")).toBe("access_denied")
    const refusedResponse = await complete(refused)
    expect(refusedResponse.status).toBe(401)
    expect((await json(refusedResponse)).detail).toContain("The user refused")
  })

  it("completes a sign-in the web app started into its refresh cookie and back to the app", async () => {
    provider.loginAs = "alice-sub"
    const start = await server.request("/auth/oidc/start?app=1", { auth: null, redirect: "manual" })
    expect(start.status).toBe(302)
    const marker = start.headers.getSetCookie().find((line) => line.startsWith("cairn_oidc_app=1"))!
    expect(marker.toLowerCase()).toContain("path=/auth/oidc/callback")
    expect(marker.toLowerCase()).toContain("httponly")
    const callback = await followUntil(start.headers.get("location")!, callbackUrl)
    const back = await server.request(`/auth/oidc/callback${callback.search}`, {
      auth: null,
      redirect: "manual",
      headers: { cookie: "cairn_oidc_app=1" }
    })
    expect(back.status).toBe(302)
    expect(back.headers.get("location")).toBe("/")
    const cookies = back.headers.getSetCookie()
    const refresh = cookies.find((line) => line.startsWith("cairn_refresh="))!
    expect(refresh.toLowerCase()).toContain("samesite=strict")
    expect(cookies.some((line) => line.startsWith("cairn_oidc_app=;"))).toBe(true)
    const token = refresh.slice("cairn_refresh=".length).split(";")[0]
    const signedIn = await server.request("/auth/refresh", {
      method: "POST",
      auth: null,
      headers: { "cairn-refresh-cookie": "1", cookie: `cairn_refresh=${token}` },
      body: "{}"
    })
    expect(signedIn.status).toBe(200)
    expect((await json(signedIn)).user.username).toBe("alice")
  })
})
