/**
 * The request edge (src/http/RequestGuard.ts): bad input is refused once, before a handler or the
 * database sees it, in the spec's shape: body limits (413 before the body is read whole), JSON
 * depth, NUL and lone surrogates, content types, multipart boundaries, capped 422s, the chat
 * message length; and a refused request changes nothing.
 */
import * as net from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { inspectJsonText, MAX_JSON_DEPTH, MAX_JSON_ENTRIES } from "../../src/http/JsonText.ts"
import { type FakeLlm, fakeLlmEnv, startFakeLlm } from "../fixtures/fakeLlm.ts"
import { backends } from "../support/database.ts"
import { API_KEY, json, startServer, type TestServer } from "../support/server.ts"
import { scaled } from "../support/time.ts"

describe("inspectJsonText", () => {
  const nested = (depth: number) => "[".repeat(depth) + "]".repeat(depth)

  it("takes the deepest allowed nesting and refuses one level more", () => {
    expect(inspectJsonText(nested(MAX_JSON_DEPTH))).toBeUndefined()
    expect(inspectJsonText(nested(MAX_JSON_DEPTH + 1))).toEqual({ reason: "too_deep", at: MAX_JSON_DEPTH })
    expect(inspectJsonText(`{"a":${nested(3)}}`, 3)).toEqual({ reason: "too_deep", at: 7 })
  })

  it("refuses a list or object of more than the allowed entries", () => {
    expect(inspectJsonText(JSON.stringify(Array(MAX_JSON_ENTRIES).fill(1)))).toBeUndefined()
    expect(inspectJsonText(JSON.stringify({ a: [Array(MAX_JSON_ENTRIES).fill(1)] }))).toBeUndefined()
    expect(inspectJsonText(JSON.stringify(Array(MAX_JSON_ENTRIES + 1).fill(1)))?.reason).toBe("too_many_entries")
    expect(
      inspectJsonText(JSON.stringify(Object.fromEntries(Array.from({ length: MAX_JSON_ENTRIES + 1 }, (_, i) => [`k${i}`, i]))))?.reason
    ).toBe("too_many_entries")
    // Commas inside strings are text.
    expect(inspectJsonText(JSON.stringify(["a,".repeat(MAX_JSON_ENTRIES * 2)]))).toBeUndefined()
  })

  it("does not count brackets inside strings", () => {
    expect(inspectJsonText(JSON.stringify({ text: "[".repeat(500) + "{".repeat(500) }))).toBeUndefined()
  })

  it("finds NUL and lone surrogates written as escapes, and lets pairs and escaped backslashes through", () => {
    expect(inspectJsonText("{\"a\":\"x\\u0000\"}")).toEqual({ reason: "nul", at: 7 })
    expect(inspectJsonText("{\"a\":\"\\ud800\"}")?.reason).toBe("lone_surrogate")
    expect(inspectJsonText("{\"a\":\"\\ud800x\"}")?.reason).toBe("lone_surrogate")
    expect(inspectJsonText("{\"a\":\"\\udc00\"}")?.reason).toBe("lone_surrogate")
    expect(inspectJsonText("{\"a\":\"\\ud83d\\ude00 and \\u00e9\"}")).toBeUndefined()
    expect(inspectJsonText(JSON.stringify({ a: "😀 é" }))).toBeUndefined()
    // A backslash, then the letters u0000: text, not a NUL.
    expect(inspectJsonText(JSON.stringify({ a: "\\u0000" }))).toBeUndefined()
    expect(inspectJsonText(JSON.stringify({ a: "\\\"\\u0000" }))).toBeUndefined()
  })
})

/** Sends a request head and part of a body on a raw socket; answers the status line and how much was sent. */
const partialBody = (port: number, path: string, headers: Record<string, string>, chunks: ReadonlyArray<Buffer>, chunked: boolean) =>
  new Promise<{ status: number; response: string; sent: number }>((resolve, reject) => {
    const socket = net.connect(port, "127.0.0.1")
    let response = ""
    let sent = 0
    const done = () => {
      socket.destroy()
      resolve({ status: Number(response.split(" ", 2)[1]), response, sent })
    }
    socket.on("data", (data) => {
      response += data.toString("latin1")
      // Whole once the body its Content-Length announces is in (the server may keep the connection).
      const end = response.indexOf("\r\n\r\n")
      const length = /content-length: (\d+)/i.exec(response)?.[1]
      if (end !== -1 && length !== undefined && response.length - end - 4 >= Number(length)) done()
    })
    socket.on("error", () => {})
    socket.on("close", done)
    socket.setTimeout(15_000, () => {
      socket.destroy()
      reject(new Error(`no answer; got ${JSON.stringify(response.slice(0, 200))}`))
    })
    socket.on("connect", () => {
      const head = [`POST ${path} HTTP/1.1`, "Host: 127.0.0.1", ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`), "", ""].join(
        "\r\n"
      )
      socket.write(head)
      for (const chunk of chunks) {
        socket.write(chunked ? Buffer.concat([Buffer.from(`${chunk.length.toString(16)}\r\n`), chunk, Buffer.from("\r\n")]) : chunk)
        sent += chunk.length
      }
      // The body is never finished: only an answer before its end passes.
    })
  })

describe.each(backends)("the request edge (%s)", (backend) => {
  let server: TestServer
  let llm: FakeLlm
  beforeAll(async () => {
    llm = await startFakeLlm()
    server = await startServer({ backend, env: fakeLlmEnv(llm) })
  })
  afterAll(async () => {
    await server?.close()
    await llm?.close()
  })

  const post = (path: string, body: string, headers: Record<string, string> = {}) =>
    server.request(path, { method: "POST", body, headers: { "content-type": "application/json", ...headers } })
  const putSettings = (values: Record<string, unknown>) =>
    server.request("/api/v1/admin/settings", { method: "PUT", body: JSON.stringify(values) })
  /** 1.5 MB in chunks (past the 1 MiB default), the body never finished. */
  const chunkedPastLimit = (path: string, key: string | null) =>
    partialBody(
      server.port,
      path,
      { ...(key ? { authorization: `Bearer ${key}` } : {}), "content-type": "application/json", "transfer-encoding": "chunked" },
      Array.from({ length: 6 }, () => Buffer.alloc(256 * 1024, 0x20)),
      true
    )
  const resetSetting = (key: string) => server.request(`/api/v1/admin/settings/${key}`, { method: "DELETE" })
  const expectIssue = async (response: Response, status: number, loc: ReadonlyArray<unknown>) => {
    expect(response.status).toBe(status)
    const body = await json(response)
    expect(body.detail).toEqual([expect.objectContaining({ loc, msg: expect.any(String), type: expect.any(String) })])
    return body
  }

  it("answers a 50 MB body 413 from its Content-Length, having read less than 2 MB, and closes the connection", async () => {
    const megabyte = Buffer.alloc(1024 * 1024, 0x20)
    const answer = await partialBody(
      server.port,
      "/api/v1/admin/bots",
      { authorization: `Bearer ${API_KEY}`, "content-type": "application/json", "content-length": String(50 * 1024 * 1024) },
      [megabyte],
      false
    )
    expect(answer.status).toBe(413)
    expect(answer.sent).toBeLessThan(2 * 1024 * 1024)
    expect(answer.response.toLowerCase()).toContain("connection: close")
    expect(answer.response).toContain("REQUEST_MAX_BYTES")
  })

  it("answers a chunked body 413 once it passes the limit, without waiting for its end; credentials are checked first", async () => {
    expect((await chunkedPastLimit("/api/v1/admin/bots", API_KEY)).status).toBe(413)
    expect((await chunkedPastLimit("/api/v1/admin/bots", null)).status).toBe(401)
  })

  // The document below is the first this test process embeds: the GloVe vectors load then (a few
  // seconds and ~1 GB transiently; over a minute on a machine busy with other work).
  it("follows REQUEST_MAX_BYTES at runtime and gives routes that carry files UPLOAD_MAX_BYTES", { timeout: scaled(240_000) }, async () => {
    expect((await putSettings({ REQUEST_MAX_BYTES: 4096 })).status).toBe(200)
    try {
      const big = JSON.stringify({ id: "edge-big", name: "x".repeat(5000) })
      const refused = await post("/api/v1/admin/bots", big)
      expect(refused.status).toBe(413)
      expect(await json(refused)).toEqual({ detail: expect.stringContaining("4096 bytes (REQUEST_MAX_BYTES)") })
      // A document is a files route: its limit is UPLOAD_MAX_BYTES, not the 4 KiB above.
      const document = await post(
        "/api/v1/documents",
        JSON.stringify({ title: "long", content: "word ".repeat(40_000), integration_id: "edge" })
      )
      expect(document.status).toBe(201)
    } finally {
      expect((await resetSetting("REQUEST_MAX_BYTES")).status).toBe(200)
    }
    expect((await post("/api/v1/admin/bots", JSON.stringify({ id: "edge-big", name: "x".repeat(5000) }))).status).not.toBe(413)
  })

  it("refuses deep nesting, NUL and lone surrogates with 422 and stores nothing", async () => {
    const deep = `{"id":"edge-deep","name":"n","metadata":${"[".repeat(5000)}${"]".repeat(5000)}}`
    await expectIssue(await post("/api/v1/admin/bots", deep), 422, ["body"])
    await expectIssue(await post("/api/v1/admin/bots", "{\"id\":\"edge-nul\",\"name\":\"a\\u0000b\"}"), 422, ["body"])
    await expectIssue(await post("/api/v1/admin/bots", "{\"id\":\"edge-sur\",\"name\":\"a\\ud800b\"}"), 422, ["body"])
    const { bots } = await json(await server.request("/api/v1/admin/bots"))
    expect(bots.map((bot: { id: string }) => bot.id)).not.toEqual(expect.arrayContaining([expect.stringMatching(/^edge-(deep|nul|sur)$/)]))
    // A surrogate pair is an emoji, and welcome.
    const emoji = await post("/api/v1/admin/channels", JSON.stringify({ name: "smile 😀", bot_id: "default", client_id: "edge-emoji" }))
    expect(emoji.status).toBe(201)
    expect((await json(emoji)).name).toBe("smile 😀")
  })

  it("answers a NUL in model_override 422, and usage goes on being recorded", async () => {
    const from = new Date(Date.now() - 1000).toISOString()
    await expectIssue(await post("/chat", JSON.stringify({ message: "hi", model_override: "gpt\u0000x" })), 422, ["body"])
    llm.script({ text: "fine", usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 } })
    const answered = await post("/chat", JSON.stringify({ message: "hi", client_id: "edge-usage" }))
    expect(answered.status).toBe(200)
    // Usage is written in batches: a report flushes them first.
    const report = await server.request(`/api/v1/admin/usage?from=${encodeURIComponent(from)}`)
    expect(report.status).toBe(200)
    expect((await json(report)).totals.calls).toBeGreaterThanOrEqual(1)
  })

  it("refuses NUL in a query or path and a path that does not decode, with 422", async () => {
    await expectIssue(await server.request("/api/v1/admin/tasks?status=%00"), 422, ["query"])
    await expectIssue(await server.request("/api/v1/admin/bots/a%00b"), 422, ["path"])
    await expectIssue(await server.request("/api/v1/admin/bots/%E0%A4%A"), 422, ["path"])
    await expectIssue(await server.request("/api/v1/admin/bots/%ED%A0%80"), 422, ["path"])
  })

  it("answers a JSON route sent text or a form 415, even when every field is optional", async () => {
    for (const type of ["text/plain", "application/x-www-form-urlencoded"]) {
      const response = await server.request("/chat/cancel", { method: "POST", body: "session_id=x", headers: { "content-type": type } })
      expect(response.status).toBe(415)
      expect(await json(response)).toEqual({ detail: expect.stringContaining("application/json") })
    }
    // JSON with a parameter and the +json family are JSON.
    const typed = await server.request("/chat/cancel", {
      method: "POST",
      body: "{}",
      headers: { "content-type": "application/json; charset=utf-8" }
    })
    expect(typed.status).not.toBe(415)
  })

  it("answers a multipart body without a boundary 422", async () => {
    const response = await server.request("/api/v1/attachments/upload", {
      method: "POST",
      body: "--x\r\ncontent-disposition: form-data; name=\"file\"\r\n\r\nhello\r\n--x--\r\n",
      headers: { "content-type": "multipart/form-data" }
    })
    await expectIssue(response, 422, ["header", "content-type"])
  })

  it("refuses 100,000 items before decoding them, and caps a 422 of many bad items at 50 issues and a small body", async () => {
    const many = await post("/api/v1/admin/bots", JSON.stringify({ id: "edge-many", name: "n", tools: Array(100_000).fill(1) }))
    // One issue on the body as a whole, naming the entry cap and where the text passed it: refused
    // by the scan of the text, before any item was decoded (which would name items, as below).
    const refused = await expectIssue(many, 422, ["body"])
    expect(refused.detail[0].msg).toContain(`more than ${MAX_JSON_ENTRIES} entries (at character`)
    const response = await post(
      "/api/v1/admin/bots",
      JSON.stringify({ id: "edge-many", name: "n", tools: Array(MAX_JSON_ENTRIES).fill(1) })
    )
    const text = await response.text()
    expect(response.status).toBe(422)
    expect(JSON.parse(text).detail.length).toBe(50)
    expect(text.length).toBeLessThan(20_000)
  })

  it("refuses a chat message longer than CHAT_MESSAGE_MAX_CHARS with 422, on /chat and /v1", async () => {
    expect((await putSettings({ CHAT_MESSAGE_MAX_CHARS: 100 })).status).toBe(200)
    try {
      const before = llm.requestsTo("/v1/chat/completions").length
      const body = await expectIssue(await post("/chat", JSON.stringify({ message: "y".repeat(101), client_id: "edge-long" })), 422, [
        "body",
        "message"
      ])
      expect(body.detail[0].msg).toContain("CHAT_MESSAGE_MAX_CHARS")
      // /v1 answers in OpenAI's error shape.
      const openAi = await post(
        "/v1/chat/completions",
        JSON.stringify({ model: "default", messages: [{ role: "user", content: "y".repeat(101) }] })
      )
      expect(openAi.status).toBe(422)
      expect((await json(openAi)).error).toMatchObject({
        param: "messages.0.content",
        message: expect.stringContaining("CHAT_MESSAGE_MAX_CHARS")
      })
      expect(llm.requestsTo("/v1/chat/completions").length).toBe(before)
      expect((await post("/chat", JSON.stringify({ message: "y".repeat(100), client_id: "edge-long" }))).status).toBe(200)
    } finally {
      expect((await resetSetting("CHAT_MESSAGE_MAX_CHARS")).status).toBe(200)
    }
  })

  it("gives an integration's route the same edge: a refused body is answered, never handed over as empty", async () => {
    expect((await chunkedPastLimit("/integrations/example/ingest", API_KEY)).status).toBe(413)
    await expectIssue(await post("/integrations/example/ingest", "{\"title\":\"t\",\"content\":\"a\\u0000\"}"), 422, ["body"])
    // Cairn refusing what the handler passed on (a title past the documents' limit) is the caller's 422, not a 500.
    const refused = await expectIssue(
      await post("/integrations/example/ingest", JSON.stringify({ title: "t".repeat(2000), content: "c" })),
      422,
      ["body"]
    )
    expect(refused.detail[0].type).toBe("invalid_argument")
    expect((await post("/integrations/example/ingest", JSON.stringify({ title: "t", content: "fine" }))).status).toBe(201)
  })
})
