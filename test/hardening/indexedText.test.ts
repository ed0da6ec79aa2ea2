/**
 * Text stored in an indexed column is bounded in its Schema (`indexedText`, contract/Params.ts): a
 * value past the bound is a 422 naming the field, where it used to reach the INSERT and fail there
 * (`index row size … exceeds btree … maximum 2704`), answered 500. The values are random letters:
 * a repeated letter compresses below the index's limit and would hide the failure.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startFakeLlm, fakeLlmEnv, type FakeLlm } from "../fixtures/fakeLlm.ts"
import { backends } from "../support/database.ts"
import { json, startServer, type TestServer } from "../support/server.ts"
import { rng } from "./cases.ts"

const text = (length: number, seed = 7) => {
  const random = rng(seed)
  return Array.from({ length }, () => "abcdefghijklmnopqrstuvwxyz0123456789"[Math.floor(random() * 36)]).join("")
}

describe.each(backends)("indexed text bounds (%s)", (backend) => {
  let llm: FakeLlm
  let server: TestServer
  beforeAll(async () => {
    llm = await startFakeLlm()
    llm.setDefaultReply({ text: "ok" })
    server = await startServer({ backend, env: fakeLlmEnv(llm) })
  })
  afterAll(async () => {
    await server?.close()
    await llm?.close()
  })
  const post = (path: string, body: unknown) => server.request(path, { method: "POST", body: JSON.stringify(body) })
  const refused = async (response: Response, field: string) => {
    expect(response.status).toBe(422)
    const body = await json(response)
    expect(body.detail).toContainEqual(expect.objectContaining({ loc: ["body", field], msg: `${field} must be at most 255 characters` }))
  }

  it("refuses a client_id past 255 characters on the routes that make a session, and takes one of 255", async () => {
    await refused(await post("/api/v1/sessions", { client_id: text(10_000) }), "client_id")
    await refused(await post("/chat", { message: "hi", client_id: text(10_000) }), "client_id")
    await refused(await post("/chat/stream", { message: "hi", client_id: text(256) }), "client_id")
    const made = await post("/api/v1/sessions", { client_id: text(255) })
    expect(made.status).toBe(200)
    expect((await post("/chat", { message: "hi", client_id: text(255, 8) })).status).toBe(200)
  })

  it("keeps the channels' and bindings' bound of 255 through the same building block", async () => {
    await refused(await post("/api/v1/admin/channels", { name: text(256), bot_id: "default" }), "name")
    await refused(await post("/api/v1/channels", { client_id: text(10_000), bot_id: "default" }), "client_id")
  })
})
