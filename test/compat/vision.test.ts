/**
 * Vision: image attachments (`{type: "image", mime_type, name, data | url}`) reach the model as
 * image content parts, in the turn and in later turns' history; a model that takes no images ends
 * the run with a clear error event (refused before sending when it is known, or by the provider);
 * the count and size limits are runtime settings, 422 past them, and nothing is stored then.
 */
import * as crypto from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { FakeLlm } from "../fixtures/fakeLlm.ts"
import { backends } from "../support/database.ts"
import { json, type TestServer } from "../support/server.ts"
import { streamedEvents } from "../support/sse.ts"
import { startWithFakeLlm, stopWithFakeLlm } from "./harness.ts"

const image = (bytes = 300, name = "photo.png") => ({
  type: "image",
  mime_type: "image/png",
  name,
  data: crypto.randomBytes(bytes).toString("base64")
})

describe.each(backends)("image attachments (%s)", (backend) => {
  let server: TestServer
  let llm: FakeLlm

  beforeAll(async () => {
    const started = await startWithFakeLlm(backend, "A red dot.", {}, { textOnlyModels: ["fake-blind"] })
    server = started.server
    llm = started.llm
    // A provider whose model entry says it takes no images.
    const provider = await server.request("/api/v1/admin/providers", {
      method: "POST",
      body: JSON.stringify({
        id: "local",
        base_url: llm.url,
        api_key: "sk-local-0123456789",
        models: [{ id: "reader-only", vision: false }]
      })
    })
    expect(provider.status).toBe(201)
  })
  afterAll(async () => {
    await stopWithFakeLlm({ server, llm })
  })
  const post = (path: string, body: unknown) => server.request(path, { method: "POST", body: JSON.stringify(body) })
  const lastModelCall = () => llm.requestsTo("/v1/chat/completions").at(-1)!.body as any
  const userParts = (body: any) => body.messages.filter((m: any) => m.role === "user").map((m: any) => m.content)

  it("sends an image to the model as an image part beside the text, stores it, and keeps it in later turns", async () => {
    const picture = image()
    const sessionId = crypto.randomUUID()
    const answer = await post("/chat", {
      message: "What is in this picture?",
      client_id: "vision",
      session_id: sessionId,
      attachments: [picture]
    })
    expect(answer.status).toBe(200)
    expect((await json(answer)).response).toBe("A red dot.")
    expect(userParts(lastModelCall()).at(-1)).toEqual([
      { type: "text", text: "What is in this picture?" },
      { type: "image_url", image_url: { url: `data:image/png;base64,${picture.data}` } }
    ])
    const stored = await json(await server.request(`/sessions/${sessionId}`))
    expect(stored.messages[0].attachments).toEqual([picture])

    // The next turn, text only: the model still sees the earlier image in the history.
    expect((await post("/chat", { message: "And its colour?", client_id: "vision", session_id: sessionId })).status).toBe(200)
    const parts = userParts(lastModelCall())
    expect(parts.at(-1)).toBe("And its colour?")
    expect(parts.at(-2)[1]).toEqual({ type: "image_url", image_url: { url: `data:image/png;base64,${picture.data}` } })
  })

  it("passes an image URL through, and takes an image with no text", async () => {
    const answer = await post("/chat", {
      client_id: "vision-url",
      session_id: crypto.randomUUID(),
      attachments: [{ type: "image", mime_type: "image/jpeg", name: "cat.jpg", url: "https://images.example.org/cat.jpg" }]
    })
    expect(answer.status).toBe(200)
    expect(userParts(lastModelCall()).at(-1)).toEqual([{ type: "image_url", image_url: { url: "https://images.example.org/cat.jpg" } }])
  })

  const streamed = (body: Record<string, unknown>) => streamedEvents(server, body)

  it("ends the run with a clear error when the provider refuses the image", async () => {
    const calls = llm.requestsTo("/v1/chat/completions").length
    const events = await streamed({
      message: "look",
      client_id: "vision-blind",
      session_id: crypto.randomUUID(),
      model_override: "fake-blind",
      attachments: [image()]
    })
    const error = events.find((event) => event.type === "error")
    expect(error?.message).toMatch(/fake-blind did not accept the image attachments: .*image_url is only supported by certain models/)
    expect(events.at(-1)!.type).toBe("response")
    // The provider was asked once (no retry of a refused request).
    expect(llm.requestsTo("/v1/chat/completions").length).toBe(calls + 1)
  })

  it("refuses before sending when the model is known to take no images", async () => {
    const calls = llm.requestsTo("/v1/chat/completions").length
    const events = await streamed({
      message: "look",
      client_id: "vision-known",
      session_id: crypto.randomUUID(),
      model_override: "local/reader-only",
      attachments: [image()]
    })
    expect(events.find((event) => event.type === "error")?.message, JSON.stringify(events)).toMatch(
      /local\/reader-only does not take images/
    )
    expect(llm.requestsTo("/v1/chat/completions").length).toBe(calls)
    // The same model is fine without images.
    const plain = await streamed({ message: "just text", client_id: "vision-known", model_override: "local/reader-only" })
    expect(plain.find((event) => event.type === "error")).toBeUndefined()
  })

  it("refuses past the count and size settings with 422, storing nothing", async () => {
    const settings = (values: Record<string, unknown>) =>
      server.request("/api/v1/admin/settings", { method: "PUT", body: JSON.stringify(values) })
    expect((await settings({ ATTACHMENT_MAX_COUNT: 2, ATTACHMENT_MAX_BYTES: 1000 })).status).toBe(200)
    try {
      const sessionId = crypto.randomUUID()
      const tooMany = await post("/chat", { message: "three", session_id: sessionId, attachments: [image(), image(), image()] })
      expect(tooMany.status).toBe(422)
      expect((await json(tooMany)).detail[0]).toMatchObject({ loc: ["body", "attachments"], type: "too_many_attachments" })
      const tooLarge = await post("/chat", { message: "big", session_id: sessionId, attachments: [image(100), image(1001, "big.png")] })
      expect(tooLarge.status).toBe(422)
      const [largeError] = (await json(tooLarge)).detail
      expect(largeError).toMatchObject({ loc: ["body", "attachments", 1, "data"], type: "attachment_too_large" })
      expect(largeError.msg).toMatch(/big\.png is 1001 bytes; the limit is 1000/)
      const passive = await post("/chat", { message: "quiet", session_id: sessionId, passive: true, attachments: [image(1001)] })
      expect(passive.status).toBe(422)
      // Nothing was stored: the session was never created.
      expect((await server.request(`/sessions/${sessionId}`)).status).toBe(404)
      expect((await post("/chat", { message: "fits", session_id: sessionId, attachments: [image(1000), image(10)] })).status).toBe(200)
      expect((await settings({ ATTACHMENT_MAX_COUNT: 0 })).status).toBe(422)
    } finally {
      await server.request("/api/v1/admin/settings/ATTACHMENT_MAX_COUNT", { method: "DELETE" })
      await server.request("/api/v1/admin/settings/ATTACHMENT_MAX_BYTES", { method: "DELETE" })
    }
  })

  it("takes the companion client's shape (filename) and the original server's (content) as name and data", async () => {
    const picture = image()
    const sessionId = crypto.randomUUID()
    const companion = { type: "image", mime_type: "image/png", data: picture.data, filename: "from-phone.png" }
    const original = { mime_type: "image/png", name: "legacy.png", content: picture.data }
    const answer = await post("/chat", {
      message: "Two pictures",
      client_id: "vision",
      session_id: sessionId,
      attachments: [companion, original]
    })
    expect(answer.status).toBe(200)
    const stored = await json(await server.request(`/sessions/${sessionId}`))
    expect(stored.messages[0].attachments).toEqual([
      { type: "image", mime_type: "image/png", name: "from-phone.png", data: picture.data },
      { type: "image", mime_type: "image/png", name: "legacy.png", data: picture.data }
    ])
    const parts = userParts(lastModelCall()).at(-1)
    expect(parts.filter((part: any) => part.type === "image_url")).toHaveLength(2)
  })

  it("refuses an attachment of the wrong shape with 422", async () => {
    const shapes = [
      { mime_type: "application/pdf", name: "a.pdf", data: "AAAA" },
      { mime_type: "image/png", name: "both.png", data: "AAAA", url: "https://example.org/a.png" },
      { mime_type: "image/png", name: "neither.png" },
      { mime_type: "image/png", name: "prefixed.png", data: "data:image/png;base64,AAAA" },
      { mime_type: "image/png", name: "", data: "AAAA" },
      { mime_type: "image/png", name: "local.png", url: "file:///etc/passwd" },
      { type: "image", mime_type: "image/png", data: "AAAA" },
      { mime_type: "image/png", filename: "both.png", content: "AAAA", url: "https://example.org/a.png" },
      "just a string"
    ]
    for (const attachment of shapes) {
      const response = await post("/chat", { message: "x", client_id: "vision-bad", attachments: [attachment] })
      expect(response.status, JSON.stringify(attachment)).toBe(422)
      expect((await json(response)).detail[0].loc.slice(0, 2)).toEqual(["body", "attachments"])
    }
  })
})
