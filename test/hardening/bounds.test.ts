/**
 * Values bounded where they meet the database, as the fuzz test found them unbounded:
 * - text stored in an indexed column (`indexedText`, contract/Params.ts): a value past the bound is
 *   a 422 naming the field, where it used to reach the INSERT and fail there (`index row size …
 *   exceeds btree … maximum 2704`), answered 500. The values are random letters: a repeated letter
 *   compresses below the index's limit and would hide the failure;
 * - the runtime settings' whole numbers (settings/Model.ts): `1e308` is an integer to JavaScript, and
 *   was stored, then met SQL (BACKUP_RETENTION's OFFSET: every backup failed) or a Date.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type FakeLlm, fakeLlmEnv, startFakeLlm } from "../fixtures/fakeLlm.ts"
import { backends } from "../support/database.ts"
import { json, startServer, type TestServer } from "../support/server.ts"
import { rng } from "./cases.ts"

const text = (length: number, seed = 7) => {
  const random = rng(seed)
  return Array.from({ length }, () => "abcdefghijklmnopqrstuvwxyz0123456789"[Math.floor(random() * 36)]).join("")
}

describe.each(backends)("bounds where values meet the database (%s)", (backend) => {
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

  it("refuses a whole-number setting beyond the database's int (or a century of days), and a backup runs at the bound", async () => {
    const put = (values: Record<string, unknown>) =>
      server.request("/api/v1/admin/settings", { method: "PUT", body: JSON.stringify(values) })
    for (
      const [key, value] of [["BACKUP_RETENTION", 1e308], ["BACKUP_RETENTION", 2_147_483_648], ["LOG_RETENTION_DAYS", 36_501], [
        "ATTACHMENT_MAX_COUNT",
        1e308
      ], ["BACKUP_INTERVAL_HOURS", 1e308]] as const
    ) {
      const response = await put({ [key]: value })
      expect(response.status, `${key} = ${value}`).toBe(422)
      expect(JSON.stringify((await json(response)).detail)).toContain("Expected a whole number")
    }
    expect((await put({ BACKUP_RETENTION: 2_147_483_647, LOG_RETENTION_DAYS: 36_500 })).status).toBe(200)
    const started = await json(await server.request("/api/v1/admin/operations/backup", { method: "POST" }))
    let backup = started
    for (let i = 0; i < 200 && backup.status === "running"; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100))
      backup = await json(await server.request(`/api/v1/admin/operations/backup/${started.id}`))
    }
    expect(backup).toMatchObject({ status: "complete", error: null })
  })
})
