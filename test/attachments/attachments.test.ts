/**
 * Attachments: upload (type read from the content, never the name or the declared type), list with
 * filters, metadata, download (images inline, anything else as a download that never renders),
 * reference by id in a chat message (an image reaches the model as vision input, a text file as
 * text), a refused oversize (413) and refused types (415) that store nothing, owners, delete.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createKey } from "../auth/helpers.ts"
import { startWithFakeLlm, stopWithFakeLlm } from "../compat/harness.ts"
import type { FakeLlm } from "../fixtures/fakeLlm.ts"
import { backends } from "../support/database.ts"
import { json, type TestServer } from "../support/server.ts"

/** A real 1×1 PNG. */
const png = Buffer.from("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==", "base64")

describe.each(backends)("attachments (%s)", (backend) => {
  let server: TestServer
  let llm: FakeLlm

  beforeAll(async () => {
    const started = await startWithFakeLlm(backend, "I see it.")
    server = started.server
    llm = started.llm
  })
  afterAll(async () => {
    await stopWithFakeLlm({ server, llm })
  })

  const upload = (bytes: Uint8Array | string, name: string, declared = "application/octet-stream", auth?: string, query = "") => {
    const form = new FormData()
    form.append("file", new Blob([bytes], { type: declared }), name)
    return server.request(`/api/v1/attachments/upload${query}`, { method: "POST", body: form, ...(auth ? { auth } : {}) })
  }
  const settings = (values: Record<string, unknown>) =>
    server.request("/api/v1/admin/settings", { method: "PUT", body: JSON.stringify(values) })
  const listed = async (query = "") =>
    (await json(await server.request(`/api/v1/attachments${query}`))) as Array<{ id: string; name: string; type: string }>

  it("stores an upload as what its bytes are, whatever its name and declared type say", async () => {
    const response = await upload(png, "holiday.txt", "text/plain")
    expect(response.status).toBe(201)
    const stored = await json(response)
    expect(stored).toMatchObject({
      name: "holiday.txt",
      type: "image/png",
      size_bytes: png.length,
      url: `/api/v1/attachments/${stored.id}/file`
    })
    expect(stored.sha256).toMatch(/^[0-9a-f]{64}$/)
    expect(await json(await server.request(`/api/v1/attachments/${stored.id}`))).toEqual(stored)
    // A page of script sent as an image is text, and is served as a download.
    const disguised = await json(await upload("<html><script>alert(1)</script></html>", "cat.png", "image/png"))
    expect(disguised.type).toBe("text/plain")
    const served = await server.request(`/api/v1/attachments/${disguised.id}/file`)
    expect(served.headers.get("content-type")).toContain("text/plain")
    expect(served.headers.get("content-disposition")).toMatch(/^attachment; filename="cat.png"/)
    expect(served.headers.get("x-content-type-options")).toBe("nosniff")
    expect(served.headers.get("content-security-policy")).toContain("sandbox")
    expect(await served.text()).toBe("<html><script>alert(1)</script></html>")
    expect((await listed("?type=image/*")).map((a) => a.id)).toContain(stored.id)
    expect((await listed("?type=image/*")).map((a) => a.id)).not.toContain(disguised.id)
    expect((await listed("?type=text/plain")).map((a) => a.id)).toEqual([disguised.id])
  })

  it("serves an image inline with its type and the same bytes", async () => {
    const stored = await json(await upload(png, "dot.png", "image/png"))
    const file = await server.request(`/api/v1/attachments/${stored.id}/file`)
    expect(file.status).toBe(200)
    expect(file.headers.get("content-type")).toBe("image/png")
    expect(file.headers.get("content-disposition")).toMatch(/^inline; filename="dot.png"/)
    expect(Buffer.from(await file.arrayBuffer()).equals(png)).toBe(true)
  })

  it("lets a chat message refer to uploads by id: the image reaches the model, a text file joins the message", async () => {
    const picture = await json(await upload(png, "dot.png", "image/png"))
    const notes = await json(await upload("# Packing\n- tent\n- stove\n", "packing.md", "text/markdown"))
    expect(notes.type).toBe("text/markdown")
    const response = await server.request("/chat", {
      method: "POST",
      body: JSON.stringify({
        message: "What is this, and what did I pack?",
        client_id: "uploads",
        attachments: [{ attachment_id: picture.id }, { attachment_id: notes.id }]
      })
    })
    expect(response.status).toBe(200)
    const body = llm.requestsTo("/v1/chat/completions").at(-1)!.body as any
    const user = body.messages.filter((m: any) => m.role === "user").at(-1).content
    expect(user[0].type).toBe("text")
    expect(user[0].text).toContain("What is this, and what did I pack?")
    expect(user[0].text).toContain("<attachment name=\"packing.md\" type=\"text/markdown\">\n# Packing\n- tent")
    expect(user[1]).toEqual({ type: "image_url", image_url: { url: `data:image/png;base64,${png.toString("base64")}` } })
  })

  it("reads a file named many times once, and refuses one past ATTACHMENT_MAX_BYTES before reading it", async () => {
    const notes = await json(await upload("tide tables", "tides.txt"))
    const repeated = await server.request("/chat", {
      method: "POST",
      body: JSON.stringify({
        message: "once",
        client_id: "uploads",
        attachments: Array.from({ length: 20 }, () => ({ attachment_id: notes.id }))
      })
    })
    expect(repeated.status).toBe(200)
    const text = (llm.requestsTo("/v1/chat/completions").at(-1)!.body as any).messages.filter((m: any) => m.role === "user").at(-1).content
    expect(text.split("tide tables").length - 1).toBe(1)
    const big = await json(await upload("x".repeat(3000), "big.txt"))
    expect((await settings({ ATTACHMENT_MAX_BYTES: 1000 })).status).toBe(200)
    const refused = await server.request("/chat", {
      method: "POST",
      body: JSON.stringify({ message: "look", client_id: "uploads", attachments: [{ attachment_id: big.id }] })
    })
    expect((await settings({ ATTACHMENT_MAX_BYTES: 10 * 1024 * 1024 })).status).toBe(200)
    expect(refused.status).toBe(422)
    expect((await json(refused)).detail[0]).toMatchObject({
      loc: ["body", "attachments", 0, "attachment_id"],
      type: "attachment_too_large"
    })
  })

  it("refuses a reference it cannot use with 422: an unknown id, a PDF", async () => {
    const pdf = await json(await upload("%PDF-1.4\n%\xe2\xe3\n1 0 obj\n<<>>\nendobj\n", "report.bin"))
    expect(pdf.type).toBe("application/pdf")
    for (const [id, type] of [[crypto.randomUUID(), "not_found"], [pdf.id, "unsupported_attachment"]] as const) {
      const refused = await server.request("/chat", {
        method: "POST",
        body: JSON.stringify({ message: "look", client_id: "uploads", attachments: [{ attachment_id: id }] })
      })
      expect(refused.status).toBe(422)
      expect((await json(refused)).detail[0]).toMatchObject({ loc: ["body", "attachments", 0, "attachment_id"], type })
    }
  })

  it("refuses an oversize upload (413) and a type it does not take (415), storing nothing", async () => {
    const before = (await listed()).length
    expect((await settings({ UPLOAD_MAX_BYTES: 1000 })).status).toBe(200)
    const big = await upload(new Uint8Array(5000).fill(65), "big.txt", "text/plain")
    expect(big.status).toBe(413)
    expect((await json(big)).detail).toContain("UPLOAD_MAX_BYTES")
    expect((await settings({ UPLOAD_MAX_BYTES: 25 * 1024 * 1024 })).status).toBe(200)
    const binary = await upload(new Uint8Array([0, 1, 2, 3, 0xfe, 0xff, 0, 7]), "program.png", "image/png")
    expect(binary.status).toBe(415)
    expect((await settings({ UPLOAD_ALLOWED_TYPES: ["image/*"] })).status).toBe(200)
    const text = await upload("plain words", "words.txt", "text/plain")
    expect(text.status).toBe(415)
    expect((await json(text)).detail).toContain("text/plain")
    expect((await upload(png, "ok.png")).status).toBe(201)
    expect((await settings({ UPLOAD_ALLOWED_TYPES: [] })).status).toBe(200)
    expect((await settings({ UPLOAD_ALLOWED_TYPES: ["images"] })).status).toBe(422)
    expect((await listed()).length).toBe(before + 1)
    const noFile = await server.request("/api/v1/attachments/upload", { method: "POST", body: JSON.stringify({ file: "x" }) })
    expect(noFile.status).toBe(422)
  })

  it("keeps each caller's uploads to that caller, and deletes", async () => {
    const mine = await createKey(server, ["attachments:read", "attachments:write"])
    const other = await createKey(server, ["attachments:read", "attachments:write"])
    const stored = await json(await upload(png, "private.png", "image/png", mine.key))
    expect((await server.request(`/api/v1/attachments/${stored.id}`, { auth: mine.key })).status).toBe(200)
    expect((await server.request(`/api/v1/attachments/${stored.id}`, { auth: other.key })).status).toBe(404)
    expect((await server.request(`/api/v1/attachments/${stored.id}/file`, { auth: other.key })).status).toBe(404)
    expect((await json(await server.request("/api/v1/attachments", { auth: other.key }))).map((a: { id: string }) => a.id)).not.toContain(
      stored.id
    )
    expect((await json(await server.request("/api/v1/attachments", { auth: mine.key }))).map((a: { id: string }) => a.id)).toEqual([
      stored.id
    ])
    expect((await server.request(`/api/v1/attachments/${stored.id}`, { method: "DELETE", auth: other.key })).status).toBe(404)
    expect((await server.request(`/api/v1/attachments/${stored.id}`, { method: "DELETE", auth: mine.key })).status).toBe(204)
    expect((await server.request(`/api/v1/attachments/${stored.id}`, { auth: mine.key })).status).toBe(404)
    expect((await server.request(`/api/v1/attachments/not-a-uuid`)).status).toBe(404)
  })
})
