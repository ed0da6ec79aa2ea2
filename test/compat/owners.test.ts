/**
 * Owners only: who reaches a session (docs/api.md "Who reaches a session"). A widget token reaches
 * only its bot and the sessions it created, whatever scopes it carries, and keeps them across a
 * re-mint; a `chat`-only key reaches the sessions it created; the static key and `sessions:read`
 * keys reach every session. Checked on every session route, through HTTP.
 */
import * as crypto from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createKey } from "../auth/helpers.ts"
import type { FakeLlm } from "../fixtures/fakeLlm.ts"
import { backends } from "../support/database.ts"
import { json, type TestServer } from "../support/server.ts"
import { readSse } from "../support/sse.ts"
import { startWithFakeLlm, stopWithFakeLlm } from "./harness.ts"

describe.each(backends)("sessions only their owners reach (%s)", (backend) => {
  let server: TestServer
  let llm: FakeLlm

  beforeAll(async () => {
    const started = await startWithFakeLlm(backend, "Hello there.", { JWT_SECRET: "owners-test-secret-0123456789-abcdefghij" })
    server = started.server
    llm = started.llm
    // The bots' key holds sessions:read and sessions:write: a widget is confined all the same.
    const botKey = await createKey(server, ["chat", "bots:read", "sessions:read", "sessions:write"])
    for (const id of ["helper", "other"]) {
      const response = await server.request("/api/v1/admin/bots", {
        method: "POST",
        body: JSON.stringify({ id, name: `Bot ${id}`, api_key_id: botKey.id })
      })
      expect(response.status).toBeLessThan(300)
    }
  })
  afterAll(async () => {
    await stopWithFakeLlm({ server, llm })
  })

  const mint = async (botId: string, pinId: string): Promise<string> => {
    const response = await server.request("/api/v1/widget-auth/mint", {
      method: "POST",
      body: JSON.stringify({ source_bot_id: botId, pin_id: pinId })
    })
    expect(response.status).toBe(200)
    return (await json(response)).token
  }
  const send = (auth: string, method: string, path: string, body?: unknown) =>
    server.request(path, { method, auth, ...(body === undefined ? {} : { body: JSON.stringify(body) }) })
  const chat = async (auth: string, body: Record<string, unknown>) => {
    const response = await send(auth, "POST", "/chat", { message: "hi", ...body })
    expect(response.status, await response.clone().text()).toBe(200)
    return (await json(response)).session_id as string
  }

  /** Every session route, each with the status it answers `auth` for session `id`. */
  const sessionRoutes = async (auth: string, id: string) => {
    const statuses: Record<string, number> = {}
    const record = async (name: string, response: Promise<Response>) => {
      const answer = await response
      statuses[name] = answer.status
      await answer.body?.cancel()
    }
    await record("get", send(auth, "GET", `/sessions/${id}`))
    await record("messages", send(auth, "GET", `/api/v1/sessions/${id}/messages`))
    await record("rejoin", send(auth, "GET", `/api/v1/sessions/${id}/stream`))
    await record("rename", send(auth, "PATCH", `/sessions/${id}`, { title: "mine now" }))
    await record("summarize", send(auth, "POST", `/sessions/${id}/summarize`))
    await record("cancel", send(auth, "POST", "/chat/cancel", { client_id: "any", bot_id: "helper", session_id: id }))
    await record("inject", send(auth, "POST", `/api/v1/sessions/${id}/messages`, { content: "injected" }))
    await record("chat", send(auth, "POST", "/chat", { message: "let me in", client_id: "any", session_id: id }))
    await record("stream", send(auth, "POST", "/chat/stream", { message: "let me in", client_id: "any", session_id: id }))
    await record("delete", send(auth, "DELETE", `/sessions/${id}`))
    return statuses
  }
  const allRefused = (statuses: Record<string, number>) => Object.fromEntries(Object.keys(statuses).map((name) => [name, 403]))

  it("confines a widget token to its own bot: chat naming another bot is 403 and changes nothing", async () => {
    const widget = await mint("helper", "pin-bot")
    const sessionId = await chat(widget, { client_id: `w-${crypto.randomUUID()}` })
    const before = await json(await server.request(`/sessions/${sessionId}`))
    expect(before.bot_id).toBe("helper")

    for (const path of ["/chat", "/chat/stream"]) {
      const other = await send(widget, "POST", path, { message: "hi", client_id: "w", bot_id: "other" })
      expect(other.status).toBe(403)
      expect((await json(other)).detail).toMatch(/own bot/)
    }
    // Not by moving its own session to another bot either.
    expect((await send(widget, "POST", "/chat", { message: "switch", client_id: "w", session_id: sessionId, bot_id: "default" })).status)
      .toBe(403)
    expect((await send(widget, "POST", "/api/v1/sessions", { client_id: "w", bot_id: "other" })).status).toBe(403)
    expect((await send(widget, "POST", "/chat/cancel", { client_id: "w", bot_id: "other" })).status).toBe(403)
    const after = await json(await server.request(`/sessions/${sessionId}`))
    expect(after.bot_id).toBe("helper")
    expect(after.messages).toHaveLength(before.messages.length)
  })

  it("refuses a widget token every session route of another widget's session, and keeps that session whole", async () => {
    const clientId = `w-${crypto.randomUUID()}`
    const owner = await mint("helper", "pin-a")
    const stranger = await mint("helper", "pin-b")
    const sessionId = await chat(owner, { client_id: clientId })
    const before = await json(await server.request(`/sessions/${sessionId}`))

    const statuses = await sessionRoutes(stranger, sessionId)
    expect(statuses).toEqual(allRefused(statuses))
    const after = await json(await server.request(`/sessions/${sessionId}`))
    expect(after.messages).toEqual(before.messages)
    expect(after.title).toBe(before.title)

    // The same client id gives the stranger a session of its own, not a way into the owner's.
    const own = await chat(stranger, { client_id: clientId })
    expect(own).not.toBe(sessionId)
    const listed = (await json(await send(stranger, "GET", "/sessions"))) as Array<{ id: string; bot_id: string }>
    expect(listed.map((s) => s.id)).toEqual([own])
  })

  it("keeps a widget's sessions across a re-mint: it reads, rejoins and lists them", async () => {
    const first = await mint("helper", "pin-remint")
    const sessionId = await chat(first, { client_id: `w-${crypto.randomUUID()}` })
    const renewed = await mint("helper", "pin-remint")
    expect(renewed).not.toBe(first)

    const read = await send(renewed, "GET", `/sessions/${sessionId}`)
    expect(read.status).toBe(200)
    expect((await json(read)).messages.map((m: { role: string }) => m.role)).toEqual(["user", "assistant"])
    const controller = new AbortController()
    const rejoin = await server.request(`/api/v1/sessions/${sessionId}/stream`, { auth: renewed, signal: controller.signal })
    expect(rejoin.status).toBe(200)
    expect((await readSse(rejoin, controller).rest()).at(-1)!.data.type).toBe("response")
    expect(((await json(await send(renewed, "GET", "/sessions"))) as Array<{ id: string }>).map((s) => s.id)).toEqual([sessionId])
  })

  it("lets a chat-only key reach the sessions it created and no other", async () => {
    const mine = await createKey(server, ["chat"])
    const theirs = await createKey(server, ["chat"])
    const sessionId = await chat(mine.key, { client_id: `k-${crypto.randomUUID()}`, session_id: crypto.randomUUID() })

    const refused = await send(theirs.key, "POST", "/chat", { message: "hijack", client_id: "k", session_id: sessionId })
    expect(refused.status).toBe(403)
    expect((await json(refused)).detail).toMatch(/another caller/)
    expect((await send(theirs.key, "GET", `/api/v1/sessions/${sessionId}/stream`)).status).toBe(403)
    expect((await send(theirs.key, "POST", `/sessions/${sessionId}/summarize`)).status).toBe(403)
    expect((await send(theirs.key, "POST", "/chat/cancel", { client_id: "k", bot_id: "default", session_id: sessionId })).status).toBe(403)

    const controller = new AbortController()
    const rejoin = await server.request(`/api/v1/sessions/${sessionId}/stream`, { auth: mine.key, signal: controller.signal })
    expect(rejoin.status).toBe(200)
    await readSse(rejoin, controller).rest()
    const again = await chat(mine.key, { client_id: "k", session_id: sessionId })
    expect(again).toBe(sessionId)
  })

  it("lets the static key and a sessions:read key reach every session", async () => {
    const widget = await mint("helper", "pin-reader")
    const sessionId = await chat(widget, { client_id: `w-${crypto.randomUUID()}` })
    const reader = await createKey(server, ["sessions:read"])
    expect((await send(reader.key, "GET", `/sessions/${sessionId}`)).status).toBe(200)
    expect((await send(reader.key, "GET", `/api/v1/sessions/${sessionId}/messages`)).status).toBe(200)
    expect(((await json(await send(reader.key, "GET", "/sessions?bot_id=helper"))) as Array<{ id: string }>).map((s) => s.id)).toContain(
      sessionId
    )
    expect((await server.request(`/sessions/${sessionId}`)).status).toBe(200)
  })
})
