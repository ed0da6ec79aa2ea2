/**
 * Documents in the chat, on both databases: a file a user uploads is made a document of their
 * conversation (`session_id`); retrieval in that conversation's turns gives the model its passages,
 * and no other conversation's turn, no other user's search or listing, finds it. Only the
 * conversation's owner adds, lists or removes its documents. PDFs are read for their text; a file
 * with no text is refused in words.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { type FakeLlm, fakeLlmEnv, startFakeLlm } from "../fixtures/fakeLlm.ts"
import { backends } from "../support/database.ts"
import { json, startServer, type TestServer } from "../support/server.ts"

const secret = "ORCHID-42"
const notes = `# Zephyr launch plan\n\nThe zephyr launch code is ${secret}. Keep the launch code for the zephyr mission safe.\n`
const png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII="

/** A one-page PDF whose text layer says `text`. */
const pdfOf = (text: string) => {
  const stream = `BT /F1 12 Tf 72 712 Td (${text}) Tj ET`
  return [
    "%PDF-1.4",
    "1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj",
    "2 0 obj << /Type /Pages /Kids [3 0 R] /Count 1 >> endobj",
    "3 0 obj << /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >> endobj",
    `4 0 obj << /Length ${stream.length} >> stream\n${stream}\nendstream endobj`,
    "5 0 obj << /Type /Font /Subtype /Type1 /BaseFont /Helvetica >> endobj",
    "trailer << /Root 1 0 R >>",
    "%%EOF"
  ].join("\n")
}

describe.each(backends)("documents in the chat (%s)", (backend) => {
  let server: TestServer
  let llm: FakeLlm
  let ana: string
  let ben: string

  const login = async (username: string) => {
    const created = await server.request("/api/v1/admin/users", {
      method: "POST",
      body: JSON.stringify({ username, password: `${username} password long` })
    })
    expect(created.status).toBe(201)
    const session = await json(
      await server.request("/auth/login", {
        method: "POST",
        auth: null,
        body: JSON.stringify({ username, password: `${username} password long` })
      })
    )
    return session.access_token as string
  }

  beforeAll(async () => {
    llm = await startFakeLlm()
    server = await startServer({ backend, env: fakeLlmEnv(llm) })
    ana = await login("ana")
    ben = await login("ben")
  })
  afterAll(async () => {
    await server?.close()
    await llm?.close()
  })
  beforeEach(() => llm.reset())

  const upload = async (token: string, name: string, content: string | Uint8Array) => {
    const form = new FormData()
    form.append("file", new Blob([content]), name)
    const response = await server.request("/api/v1/attachments/upload", { method: "POST", body: form, auth: token })
    expect(response.status).toBe(201)
    return (await json(response)).id as string
  }
  const addTo = (token: string, sessionId: string, attachmentId: string) =>
    server.request(`/api/v1/sessions/${sessionId}/documents`, {
      method: "POST",
      auth: token,
      body: JSON.stringify({ attachment_id: attachmentId, client_id: "web:docs" })
    })
  /** What the model was given for a question asked in `sessionId`. */
  const asked = async (token: string, sessionId: string, message: string) => {
    const response = await server.request("/chat", {
      method: "POST",
      auth: token,
      body: JSON.stringify({ message, session_id: sessionId, client_id: "web:docs" })
    })
    expect(response.status).toBe(200)
    return JSON.stringify(llm.requestsTo("/v1/chat/completions").at(-1)!.body.messages)
  }
  const search = async (token: string, query: string) =>
    server.request(`/api/v1/documents/search?q=${encodeURIComponent("zephyr launch code")}${query}`, { auth: token })

  it("finds a conversation's document in its own turns only, never in another's or by another user", async () => {
    const a = crypto.randomUUID()
    const b = crypto.randomUUID()
    const added = await addTo(ana, a, await upload(ana, "zephyr.md", notes))
    expect(added.status).toBe(201)
    const document = await json(added)
    expect(document).toMatchObject({ title: "zephyr.md", session_id: a, integration_id: "chat", content_chars: notes.length })
    expect(document.chunk_count).toBeGreaterThan(0)

    expect(await asked(ana, a, "What is the zephyr launch code?")).toContain(secret)
    // Other conversations with documents of their own: retrieval runs there, and finds theirs only.
    const c = crypto.randomUUID()
    const weather = "The zephyr wind blows from the west during the launch season."
    expect((await addTo(ana, b, await upload(ana, "weather.md", weather))).status).toBe(201)
    expect((await addTo(ben, c, await upload(ben, "weather.md", weather))).status).toBe(201)
    for (const [token, session] of [[ana, b], [ben, c]] as const) {
      const given = await asked(token, session, "What is the zephyr launch code?")
      expect(given).toContain("blows from the west")
      expect(given).not.toContain(secret)
    }

    // Searches: the owner's with the conversation named; nobody's without it; another user's not at all.
    const own = await json(await search(ana, `&session_id=${a}`))
    expect(own.map((hit: any) => hit.id)).toContain(document.id)
    for (const token of [ana, ben]) {
      expect((await json(await search(token, ""))).map((hit: any) => hit.id)).not.toContain(document.id)
    }
    expect((await search(ben, `&session_id=${a}`)).status).toBe(403)
    expect((await server.request(`/api/v1/documents/${document.id}`, { auth: ben })).status).toBe(404)
    const listed = await json(await server.request("/api/v1/documents?limit=500", { auth: ben }))
    expect(listed.items.map((item: any) => item.id)).not.toContain(document.id)
    // Another user's conversation: nothing added, listed or removed there.
    expect((await addTo(ben, a, await upload(ben, "mine.md", notes))).status).toBe(403)
    expect((await server.request(`/api/v1/sessions/${a}/documents`, { auth: ben })).status).toBe(403)
    const theirs = await server.request(`/api/v1/sessions/${a}/documents/${document.id}`, { method: "DELETE", auth: ben })
    expect(theirs.status).toBe(403)

    // A branch of the conversation (regenerate, edit) still has it.
    const first = (await json(await server.request(`/api/v1/sessions/${a}/messages`, { auth: ana })))[0]
    const branch = await json(
      await server.request(`/api/v1/sessions/${a}/fork`, { method: "POST", auth: ana, body: JSON.stringify({ message_id: first.id }) })
    )
    expect(await asked(ana, branch.id, "What is the zephyr launch code?")).toContain(secret)

    const mine = await json(await server.request(`/api/v1/sessions/${a}/documents`, { auth: ana }))
    expect(mine.map((item: any) => item.id)).toEqual([document.id])
    const removed = await server.request(`/api/v1/sessions/${a}/documents/${document.id}`, { method: "DELETE", auth: ana })
    expect(await json(removed)).toEqual({ id: document.id, deleted: true })
    expect(await asked(ana, a, "What is the zephyr launch code?")).not.toContain(secret)
  })

  it("deletes a conversation's documents with the conversation", async () => {
    const session = crypto.randomUUID()
    const added = await json(await addTo(ana, session, await upload(ana, "gone.md", notes)))
    expect((await server.request(`/api/v1/documents/${added.id}`)).status).toBe(200)
    expect((await server.request(`/sessions/${session}`, { method: "DELETE", auth: ana })).status).toBe(204)
    expect((await server.request(`/api/v1/documents/${added.id}`)).status).toBe(404)
  })

  it("reads a PDF's text, and refuses in words a file that has none", async () => {
    const id = crypto.randomUUID()
    const pdf = await addTo(ana, id, await upload(ana, "brief.pdf", pdfOf(`The harbour pass phrase is ${secret}.`)))
    expect(pdf.status).toBe(201)
    expect((await json(pdf)).metadata).toMatchObject({ type: "application/pdf", pages: 1 })
    expect(await asked(ana, id, "What is the harbour pass phrase?")).toContain(secret)

    const image = await addTo(ana, id, await upload(ana, "dot.png", Buffer.from(png, "base64")))
    expect(image.status).toBe(415)
    expect((await json(image)).detail).toContain("PDFs and text files")
    const unknown = await addTo(ana, id, crypto.randomUUID())
    expect(unknown.status).toBe(404)
  })
})
