/**
 * Cancel as the companion clients send it: `POST /chat/cancel {client_id, bot_id}` with no session
 * id, while a stream runs in a session the client chose itself (Ctrl+C in the client). The run
 * stops, the stream ends `cancelled`, and no session is created by the cancel.
 */
import * as crypto from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { FakeLlm } from "../fixtures/fakeLlm.ts"
import { backends } from "../support/database.ts"
import { json, type TestServer } from "../support/server.ts"
import { readSse } from "../support/sse.ts"
import { startWithFakeLlm, stopWithFakeLlm } from "./harness.ts"

describe.each(backends)("cancel without a session id (%s)", (backend) => {
  let server: TestServer
  let llm: FakeLlm

  beforeAll(async () => {
    const started = await startWithFakeLlm(backend, "Done.")
    server = started.server
    llm = started.llm
  })
  afterAll(async () => {
    await stopWithFakeLlm({ server, llm })
  })
  const post = (path: string, body: unknown) => server.request(path, { method: "POST", body: JSON.stringify(body) })
  const sessionsOf = async (clientId: string) =>
    ((await json(await server.request("/sessions"))) as Array<{ id?: string; session_id?: string; client_id: string }>).filter((s) =>
      s.client_id === clientId
    )

  it("stops the busy session's run (one the client named), ends the stream cancelled, and creates no session", async () => {
    const clientId = `cli-${crypto.randomUUID()}`
    // An older session of the same client and bot, idle: not the one to stop.
    expect((await post("/chat", { message: "earlier", client_id: clientId, bot_id: "default" })).status).toBe(200)
    llm.script({ text: "a b c d e f g h i j k l m n o p q r s t", chunkDelayMs: 150 })
    const chosen = crypto.randomUUID()
    const controller = new AbortController()
    const response = await server.request("/chat/stream", {
      method: "POST",
      body: JSON.stringify({ message: "talk slowly", client_id: clientId, bot_id: "default", session_id: chosen }),
      signal: controller.signal
    })
    expect(response.status).toBe(200)
    const sse = readSse(response, controller)
    await sse.until((e) => e.data.type === "assistant_text")
    const before = await sessionsOf(clientId)
    const cancel = await post("/chat/cancel", { client_id: clientId, bot_id: "default" })
    expect(await json(cancel)).toEqual({ cancelled: true, queued_tasks_cancelled: 0 })
    expect((await sse.rest()).at(-1)!.data.type).toBe("cancelled")
    expect(await sessionsOf(clientId)).toHaveLength(before.length)
  })

  it("answers nothing stopped, and creates no session, for a client with none", async () => {
    const clientId = `cli-${crypto.randomUUID()}`
    expect(await json(await post("/chat/cancel", { client_id: clientId, bot_id: "default" }))).toEqual({
      cancelled: false,
      queued_tasks_cancelled: 0
    })
    expect(await sessionsOf(clientId)).toHaveLength(0)
  })
})
