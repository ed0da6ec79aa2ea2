/**
 * A signed-in member reaches only the sessions it owns (docs/api.md "Who reaches a session"):
 * its `sessions:read` is for its own conversations, not everyone's. Member A cannot list, read,
 * search, export, rejoin, post to or read the attachments of member B's session; two members on the
 * same client_id get separate conversations; an admin user reaches both. Through HTTP.
 */
import * as crypto from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startWithFakeLlm, stopWithFakeLlm } from "../compat/harness.ts"
import type { FakeLlm } from "../fixtures/fakeLlm.ts"
import { backends } from "../support/database.ts"
import { json, type TestServer } from "../support/server.ts"

describe.each(backends)("members reach only their own sessions (%s)", (backend) => {
  let server: TestServer
  let llm: FakeLlm
  let admin: string
  let alice: string
  let bob: string

  const send = (auth: string, method: string, path: string, body?: unknown) =>
    server.request(path, { method, auth, ...(body === undefined ? {} : { body: JSON.stringify(body) }) })
  const signIn = async (username: string): Promise<string> => {
    const response = await server.request("/auth/login", {
      method: "POST",
      auth: null,
      body: JSON.stringify({ username, password: `${username} password!` })
    })
    expect(response.status).toBe(200)
    return (await json(response)).access_token
  }
  const chat = async (auth: string, body: Record<string, unknown>) => {
    const response = await send(auth, "POST", "/chat", { message: "hi", ...body })
    expect(response.status, await response.clone().text()).toBe(200)
    return (await json(response)).session_id as string
  }
  const listed = async (auth: string) => ((await json(await send(auth, "GET", "/sessions"))) as Array<{ id: string }>).map((s) => s.id)
  const upload = async (auth: string, text: string) => {
    const form = new FormData()
    form.append("file", new Blob([text], { type: "text/plain" }), "notes.txt")
    const response = await server.request("/api/v1/attachments/upload", { method: "POST", body: form, auth })
    expect(response.status).toBe(201)
    return (await json(response)).id as string
  }

  beforeAll(async () => {
    const started = await startWithFakeLlm(backend, "Noted.", { JWT_SECRET: "member-sessions-secret-0123456789-abcdef" })
    server = started.server
    llm = started.llm
    const setup = await server.request("/auth/setup", {
      method: "POST",
      body: JSON.stringify({ username: "root", password: "root password!" })
    })
    expect(setup.status).toBe(201)
    for (const username of ["alice", "bob"]) {
      const made = await server.request("/api/v1/admin/users", {
        method: "POST",
        body: JSON.stringify({ username, password: `${username} password!` })
      })
      expect(made.status).toBe(201)
      expect((await json(made)).role).toBe("member")
    }
    ;[admin, alice, bob] = await Promise.all([signIn("root"), signIn("alice"), signIn("bob")])
  })
  afterAll(async () => {
    await stopWithFakeLlm({ server, llm })
  })

  it("refuses member A every route into member B's session, and leaves it whole", async () => {
    const secret = `zebracorn-${crypto.randomUUID().slice(0, 8)}`
    const bobs = await chat(bob, {
      message: `my secret is ${secret}`,
      client_id: `b-${crypto.randomUUID()}`,
      session_id: crypto.randomUUID()
    })
    const before = await json(await send(bob, "GET", `/sessions/${bobs}`))

    expect(await listed(alice)).not.toContain(bobs)
    const search = await send(alice, "GET", `/api/v1/sessions/search?q=${secret}`)
    expect(search.status).toBe(200)
    expect(JSON.stringify(await json(search))).not.toContain(secret)

    const refused: Record<string, [string, string, unknown?]> = {
      get: ["GET", `/sessions/${bobs}`],
      messages: ["GET", `/api/v1/sessions/${bobs}/messages`],
      export: ["GET", `/api/v1/sessions/${bobs}/export`],
      branches: ["GET", `/api/v1/sessions/${bobs}/branches`],
      rejoin: ["GET", `/api/v1/sessions/${bobs}/stream`],
      rename: ["PATCH", `/sessions/${bobs}`, { title: "mine now" }],
      update: ["PATCH", `/api/v1/sessions/${bobs}`, { pinned: true }],
      fork: ["POST", `/api/v1/sessions/${bobs}/fork`, { message_id: before.messages[0].id }],
      cancel: ["POST", "/chat/cancel", { client_id: "any", bot_id: "default", session_id: bobs }],
      chat: ["POST", "/chat", { message: "let me in", client_id: "any", session_id: bobs }],
      stream: ["POST", "/chat/stream", { message: "let me in", client_id: "any", session_id: bobs }],
      delete: ["DELETE", `/sessions/${bobs}`]
    }
    const statuses: Record<string, number> = {}
    for (const [name, [method, path, body]] of Object.entries(refused)) {
      const response = await send(alice, method, path, body)
      statuses[name] = response.status
      await response.body?.cancel()
    }
    expect(statuses).toEqual(Object.fromEntries(Object.keys(refused).map((name) => [name, 403])))

    const after = await json(await send(bob, "GET", `/sessions/${bobs}`))
    expect(after.messages).toEqual(before.messages)
    expect(after.title).toBe(before.title)
    expect(await listed(bob)).toContain(bobs)
  })

  it("keeps member B's attachments from member A", async () => {
    const id = await upload(bob, "bob's private notes")
    expect((await send(alice, "GET", `/api/v1/attachments/${id}`)).status).toBe(404)
    expect((await send(alice, "GET", `/api/v1/attachments/${id}/file`)).status).toBe(404)
    const theirs = (await json(await send(alice, "GET", "/api/v1/attachments"))) as Array<{ id: string }>
    expect(theirs.map((a) => a.id)).not.toContain(id)
    expect((await send(bob, "GET", `/api/v1/attachments/${id}/file`)).status).toBe(200)
    expect((await send(admin, "GET", `/api/v1/attachments/${id}`)).status).toBe(200)
  })

  it("gives two members on the same client_id separate conversations", async () => {
    const clientId = `shared-${crypto.randomUUID()}`
    const a = await chat(alice, { message: "alice speaking", client_id: clientId })
    const b = await chat(bob, { message: "bob speaking", client_id: clientId })
    expect(b).not.toBe(a)
    expect(await chat(alice, { message: "alice again", client_id: clientId })).toBe(a)
    const opened = await send(alice, "POST", "/api/v1/sessions", { client_id: clientId, bot_id: "default" })
    expect(opened.status).toBeLessThan(300)
    expect((await json(opened)).session_id).toBe(a)
    const aliceLines = (await json(await send(alice, "GET", `/sessions/${a}`))).messages.map((m: { content: string }) => m.content)
    expect(aliceLines.join(" ")).not.toContain("bob speaking")
    expect(await listed(alice)).not.toContain(b)
    expect(await listed(bob)).not.toContain(a)
  })

  it("lets an admin user reach every member's sessions", async () => {
    const a = await chat(alice, { client_id: `a-${crypto.randomUUID()}` })
    const b = await chat(bob, { client_id: `b-${crypto.randomUUID()}` })
    const everyone = await listed(admin)
    expect(everyone).toEqual(expect.arrayContaining([a, b]))
    for (const id of [a, b]) {
      expect((await send(admin, "GET", `/sessions/${id}`)).status).toBe(200)
      expect((await send(admin, "GET", `/api/v1/sessions/${id}/export`)).status).toBe(200)
    }
  })
})
