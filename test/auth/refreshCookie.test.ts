/**
 * The web app's refresh cookie over HTTP: asked for with `Cairn-Refresh-Cookie: 1` on setup and
 * login, it is `HttpOnly`, `SameSite=Strict`, scoped to `/auth/refresh` and keeps the token out of
 * the body; the refresh route reads and rotates it (only in cookie mode), a refused one is cleared;
 * logout clears it, and "everywhere" ends every session of the user.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { backends } from "../support/database.ts"
import { json, startServer, type TestServer } from "../support/server.ts"

const cookieMode = { "cairn-refresh-cookie": "1" }

/** The refresh cookie a response sets: its value and attributes. */
const refreshCookieOf = (response: Response) => {
  const line = response.headers.getSetCookie().find((cookie) => cookie.startsWith("cairn_refresh="))
  if (line === undefined) return undefined
  const [pair, ...attributes] = line.split(/;\s*/)
  return { value: pair!.slice("cairn_refresh=".length), attributes: attributes.map((a) => a.toLowerCase()) }
}

describe.each(backends)("the refresh cookie (%s)", (backend) => {
  let server: TestServer
  beforeAll(async () => {
    server = await startServer({ backend })
  })
  afterAll(async () => {
    await server?.close()
  })

  const post = (path: string, body: unknown, init: { auth?: string | null; headers?: Record<string, string> } = {}) =>
    server.request(path, { method: "POST", body: JSON.stringify(body), auth: init.auth ?? null, headers: init.headers ?? {} })
  const refreshWith = (cookie: string | undefined, headers: Record<string, string> = cookieMode) =>
    post("/auth/refresh", {}, { headers: { ...headers, ...(cookie === undefined ? {} : { cookie: `cairn_refresh=${cookie}` }) } })

  it("sets the cookie on setup and login when asked, and keeps the token out of the body", async () => {
    const setup = await post("/auth/setup", { username: "root", password: "correct horse battery" }, {
      auth: server.apiKey,
      headers: cookieMode
    })
    expect(setup.status).toBe(201)
    const cookie = refreshCookieOf(setup)!
    expect(cookie.value).toMatch(/^rt_/)
    expect(cookie.attributes).toEqual(expect.arrayContaining(["httponly", "samesite=strict", "path=/auth/refresh"]))
    expect(cookie.attributes.some((a) => a.startsWith("max-age="))).toBe(true)
    // Plain http here, so not Secure (a browser would drop it); behind https it is.
    expect(cookie.attributes).not.toContain("secure")
    const body = await json(setup)
    expect(body.refresh_token).toBeUndefined()
    expect(body.access_token.split(".")).toHaveLength(3)

    const login = await post("/auth/login", { username: "root", password: "correct horse battery" }, { headers: cookieMode })
    expect(login.status).toBe(200)
    expect(refreshCookieOf(login)!.value).toMatch(/^rt_/)
    expect((await json(login)).refresh_token).toBeUndefined()

    // Without the header: no cookie, the token in the body as before.
    const plain = await post("/auth/login", { username: "root", password: "correct horse battery" })
    expect(refreshCookieOf(plain)).toBeUndefined()
    expect((await json(plain)).refresh_token).toMatch(/^rt_/)

    const behindTls = await post("/auth/login", { username: "root", password: "correct horse battery" }, {
      headers: { ...cookieMode, "x-forwarded-proto": "https" }
    })
    expect(refreshCookieOf(behindTls)!.attributes).toContain("secure")
  })

  it("refreshes from the cookie in cookie mode only, rotates it, and clears a refused one", async () => {
    const login = await post("/auth/login", { username: "root", password: "correct horse battery" }, { headers: cookieMode })
    const first = refreshCookieOf(login)!.value

    // The cookie alone (a cross-site form could make the browser send it) is not enough.
    const withoutHeader = await refreshWith(first, {})
    expect(withoutHeader.status).toBe(401)

    const refreshed = await refreshWith(first)
    expect(refreshed.status).toBe(200)
    const body = await json(refreshed)
    expect(body.refresh_token).toBeUndefined()
    expect(body.user.username).toBe("root")
    const second = refreshCookieOf(refreshed)!.value
    expect(second).toMatch(/^rt_/)
    expect(second).not.toBe(first)
    expect((await json(await server.request("/auth/me", { auth: body.access_token }))).user.username).toBe("root")

    // The spent one is refused and cleared; presenting it revoked its family, the newer one too.
    const reused = await refreshWith(first)
    expect(reused.status).toBe(401)
    const cleared = refreshCookieOf(reused)!
    expect(cleared.value).toBe("")
    expect(cleared.attributes).toEqual(expect.arrayContaining(["max-age=0", "path=/auth/refresh"]))
    expect((await refreshWith(second)).status).toBe(401)
    expect((await refreshWith(undefined)).status).toBe(401)
  })

  it("logout clears the cookie; everywhere ends every session of the user, by access token or refresh token", async () => {
    const signIn = async () => {
      const response = await post("/auth/login", { username: "root", password: "correct horse battery" }, { headers: cookieMode })
      return { cookie: refreshCookieOf(response)!.value, access: (await json(response)).access_token as string }
    }
    const phone = await signIn()
    const laptop = await signIn()
    const script = await json(await post("/auth/login", { username: "root", password: "correct horse battery" }))

    const nobody = await post("/auth/logout", { everywhere: true }, { headers: cookieMode })
    expect(nobody.status).toBe(401)
    expect((await refreshWith(phone.cookie)).status).toBe(200)
    const phoneNow = await signIn()

    const logout = await post("/auth/logout", { everywhere: true }, { auth: laptop.access, headers: cookieMode })
    expect(logout.status).toBe(204)
    expect(refreshCookieOf(logout)).toMatchObject({ value: "" })
    expect(refreshCookieOf(logout)!.attributes).toContain("max-age=0")
    for (const cookie of [laptop.cookie, phoneNow.cookie]) expect((await refreshWith(cookie)).status).toBe(401)
    expect((await post("/auth/refresh", { refresh_token: script.refresh_token })).status).toBe(401)

    // Everywhere named by a refresh token in the body works for API clients too.
    const a = await json(await post("/auth/login", { username: "root", password: "correct horse battery" }))
    const b = await json(await post("/auth/login", { username: "root", password: "correct horse battery" }))
    expect((await post("/auth/logout", { refresh_token: a.refresh_token, everywhere: true })).status).toBe(204)
    expect((await post("/auth/refresh", { refresh_token: b.refresh_token })).status).toBe(401)
    // One session's logout leaves the others.
    const c = await json(await post("/auth/login", { username: "root", password: "correct horse battery" }))
    const d = await json(await post("/auth/login", { username: "root", password: "correct horse battery" }))
    expect((await post("/auth/logout", { refresh_token: c.refresh_token })).status).toBe(204)
    expect((await post("/auth/refresh", { refresh_token: c.refresh_token })).status).toBe(401)
    expect((await post("/auth/refresh", { refresh_token: d.refresh_token })).status).toBe(200)
  })
})

describe("the access token's life", () => {
  it("issues access tokens for ACCESS_TOKEN_SECONDS", async () => {
    const short = await startServer({ backend: "pglite", env: { ACCESS_TOKEN_SECONDS: "2" } })
    try {
      const setup = await json(
        await short.request("/auth/setup", { method: "POST", body: JSON.stringify({ username: "a", password: "password 1234" }) })
      )
      expect(setup.expires_in).toBe(2)
      expect((await short.request("/auth/me", { auth: setup.access_token })).status).toBe(200)
      await new Promise((resolve) => setTimeout(resolve, 2_100))
      expect((await short.request("/auth/me", { auth: setup.access_token })).status).toBe(401)
    } finally {
      await short.close()
    }
  })
})
