/** Channels over HTTP, on both database backends: create, get-or-create, list, get, update, delete, scopes. */
import { Validator } from "@seriousme/openapi-schema-validator"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createKey } from "../auth/helpers.ts"
import { backends } from "../support/database.ts"
import { json, startServer, type TestServer } from "../support/server.ts"

const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/
const iso = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/

const channelKeys = [
  "active_session_id",
  "bot_id",
  "client_id",
  "created_at",
  "id",
  "integration",
  "integration_config",
  "model_override",
  "name",
  "passive_memory",
  "require_mention",
  "retrieval",
  "updated_at",
  "workspace_enabled"
]

describe.each(backends)("channels (%s)", (backend) => {
  let server: TestServer
  const post = (path: string, body: unknown, auth?: string) =>
    server.request(path, { method: "POST", body: JSON.stringify(body), ...(auth ? { auth } : {}) })
  const patch = (id: string, body: unknown, auth?: string) =>
    server.request(`/api/v1/channels/${id}`, { method: "PATCH", body: JSON.stringify(body), ...(auth ? { auth } : {}) })
  const list = async (query = "") => (await json(await server.request(`/api/v1/channels${query}`))).channels as Array<any>

  beforeAll(async () => {
    server = await startServer({ backend })
    const helper = await post("/api/v1/admin/bots", { id: "helper", name: "Helper" })
    expect(helper.status).toBe(201)
  })
  afterAll(async () => {
    await server?.close()
  })

  describe("POST /api/v1/admin/channels", () => {
    it("creates a channel with the defaults and client_id channel:<id>", async () => {
      const response = await post("/api/v1/admin/channels", { name: "Kitchen tablet", bot_id: "default" })
      expect(response.status).toBe(201)
      const channel = await json(response)
      expect(Object.keys(channel).sort()).toEqual(channelKeys)
      expect(channel.id).toMatch(uuid)
      expect(channel).toMatchObject({
        name: "Kitchen tablet",
        bot_id: "default",
        client_id: `channel:${channel.id}`,
        require_mention: false,
        passive_memory: false,
        workspace_enabled: false,
        active_session_id: null,
        model_override: null,
        retrieval: null,
        integration_config: {}
      })
      expect(channel.created_at).toMatch(iso)
      expect(channel.updated_at).toMatch(iso)
      const stored = await json(await server.request(`/api/v1/channels/${channel.id}`))
      expect(stored).toEqual(channel)
    })

    it("takes client_id and the settings from the request", async () => {
      const response = await post("/api/v1/admin/channels", {
        name: "Ops room",
        bot_id: "helper",
        client_id: "msgbridge:ops-room",
        require_mention: true,
        passive_memory: true,
        workspace_enabled: true,
        model_override: "default/gpt-4o"
      })
      expect(response.status).toBe(201)
      expect(await json(response)).toMatchObject({
        name: "Ops room",
        bot_id: "helper",
        client_id: "msgbridge:ops-room",
        require_mention: true,
        passive_memory: true,
        workspace_enabled: true,
        model_override: "default/gpt-4o"
      })
    })

    it("refuses a second channel for the same client_id and bot with 409", async () => {
      const body = { name: "Twice", bot_id: "default", client_id: "cli:twice" }
      expect((await post("/api/v1/admin/channels", body)).status).toBe(201)
      const again = await post("/api/v1/admin/channels", { ...body, name: "Twice again" })
      expect(again.status).toBe(409)
      expect(await json(again)).toEqual({ detail: "A channel for client_id cli:twice and bot default already exists" })
      expect((await list("?client_id=cli:twice")).map((c) => c.name)).toEqual(["Twice"])
      // The same client with another bot is another channel.
      expect((await post("/api/v1/admin/channels", { ...body, bot_id: "helper" })).status).toBe(201)
    })

    it("answers an unknown bot with 422 at body.bot_id and creates nothing", async () => {
      const response = await post("/api/v1/admin/channels", { name: "Ghost", bot_id: "no-such-bot", client_id: "cli:ghost" })
      expect(response.status).toBe(422)
      expect(await json(response)).toEqual({
        detail: [{ loc: ["body", "bot_id"], msg: "Unknown bot: no-such-bot", type: "unknown_bot" }]
      })
      expect(await list("?client_id=cli:ghost")).toEqual([])
    })

    it("reports every invalid field at once", async () => {
      const response = await post("/api/v1/admin/channels", { name: "  ", require_mention: "yes", model_override: 5 })
      expect(response.status).toBe(422)
      const body = await json(response)
      const locs = body.detail.map((issue: { loc: Array<string> }) => issue.loc.join("."))
      expect(locs).toEqual(expect.arrayContaining(["body.name", "body.bot_id", "body.require_mention", "body.model_override"]))
      for (const issue of body.detail) {
        expect(typeof issue.msg).toBe("string")
        expect(typeof issue.type).toBe("string")
      }
      expect(body.detail.find((issue: { loc: Array<string> }) => issue.loc[1] === "name").msg).toBe("name must not be blank")
    })
  })

  describe("POST /api/v1/channels", () => {
    it("creates the channel of (client_id, bot_id) once and returns it after", async () => {
      const first = await post("/api/v1/channels", { client_id: "slack:C123", bot_id: "default" })
      expect(first.status).toBe(200)
      const channel = await json(first)
      expect(channel).toMatchObject({ client_id: "slack:C123", bot_id: "default", name: "slack:C123", require_mention: false })
      const second = await post("/api/v1/channels", { client_id: "slack:C123", bot_id: "default", name: "ignored now" })
      expect(second.status).toBe(200)
      expect(await json(second)).toEqual(channel)
      const other = await json(await post("/api/v1/channels", { client_id: "slack:C123", bot_id: "helper", name: "With helper" }))
      expect(other.id).not.toBe(channel.id)
      expect(other.name).toBe("With helper")
    })

    it("is race-free: concurrent requests all get the one channel", async () => {
      const responses = await Promise.all(
        Array.from({ length: 20 }, () => post("/api/v1/channels", { client_id: "cli:race", bot_id: "default" }))
      )
      expect(responses.map((r) => r.status)).toEqual(responses.map(() => 200))
      const ids = new Set((await Promise.all(responses.map(json))).map((c) => c.id))
      expect(ids.size).toBe(1)
      expect(await list("?client_id=cli:race")).toHaveLength(1)
    })

    it("answers an unknown bot or a missing client_id with 422", async () => {
      const unknownBot = await post("/api/v1/channels", { client_id: "cli:x", bot_id: "nobody" })
      expect(unknownBot.status).toBe(422)
      expect((await json(unknownBot)).detail[0].loc).toEqual(["body", "bot_id"])
      const missing = await post("/api/v1/channels", { bot_id: "default" })
      expect(missing.status).toBe(422)
      expect((await json(missing)).detail.map((issue: { loc: Array<string> }) => issue.loc)).toEqual([["body", "client_id"]])
      expect(await list("?client_id=cli:x")).toEqual([])
    })
  })

  describe("GET /api/v1/channels", () => {
    it("lists oldest first and filters by bot_id and client_id", async () => {
      const a = await json(await post("/api/v1/channels", { client_id: "list:a", bot_id: "helper" }))
      const b = await json(await post("/api/v1/channels", { client_id: "list:b", bot_id: "helper" }))
      const helperIds = (await list("?bot_id=helper")).map((c) => c.id)
      expect(helperIds).toEqual(expect.arrayContaining([a.id, b.id]))
      expect(helperIds.indexOf(a.id)).toBeLessThan(helperIds.indexOf(b.id))
      expect((await list("?bot_id=helper")).every((c) => c.bot_id === "helper")).toBe(true)
      expect((await list("?client_id=list:b&bot_id=helper")).map((c) => c.id)).toEqual([b.id])
      expect(await list("?bot_id=nobody")).toEqual([])
    })

    it("pages with limit and offset, and refuses bad values with 422 at query", async () => {
      const all = await list()
      expect(all.length).toBeGreaterThan(3)
      expect((await list("?limit=2")).map((c) => c.id)).toEqual(all.slice(0, 2).map((c) => c.id))
      expect((await list("?limit=2&offset=1")).map((c) => c.id)).toEqual(all.slice(1, 3).map((c) => c.id))
      const bad = await server.request("/api/v1/channels?limit=0&offset=-1")
      expect(bad.status).toBe(422)
      expect((await json(bad)).detail.map((issue: { loc: Array<string> }) => issue.loc)).toEqual([
        ["query", "limit"],
        ["query", "offset"]
      ])
    })
  })

  describe("GET /api/v1/channels/{id}", () => {
    it("answers 404 for an unknown id and for a malformed one (an id that is not a UUID is not found)", async () => {
      const missing = await server.request("/api/v1/channels/00000000-0000-4000-8000-000000000000")
      expect(missing.status).toBe(404)
      expect(await json(missing)).toEqual({ detail: "Channel not found: 00000000-0000-4000-8000-000000000000" })
      const malformed = await server.request("/api/v1/channels/not-a-uuid")
      expect(malformed.status).toBe(404)
      expect(await json(malformed)).toEqual({ detail: "Channel not found: not-a-uuid" })
    })
  })

  describe("PATCH /api/v1/channels/{id}", () => {
    it("changes only the fields sent and moves updated_at", async () => {
      const channel = await json(await post("/api/v1/channels", { client_id: "patch:1", bot_id: "default" }))
      await new Promise((resolve) => setTimeout(resolve, 5))
      const response = await patch(channel.id, { name: "Renamed", require_mention: true, model_override: "default/gpt-4o" })
      expect(response.status).toBe(200)
      const updated = await json(response)
      expect(updated).toEqual({
        ...channel,
        name: "Renamed",
        require_mention: true,
        model_override: "default/gpt-4o",
        updated_at: updated.updated_at
      })
      expect(Date.parse(updated.updated_at)).toBeGreaterThan(Date.parse(channel.updated_at))
      const more = await json(await patch(channel.id, { passive_memory: true, workspace_enabled: true, model_override: null }))
      expect(more).toMatchObject({
        name: "Renamed",
        require_mention: true,
        passive_memory: true,
        workspace_enabled: true,
        model_override: null
      })
      expect(await json(await server.request(`/api/v1/channels/${channel.id}`))).toEqual(more)
      // An empty change is a read.
      expect(await json(await patch(channel.id, {}))).toEqual(more)
    })

    it("refuses wrong types and unknown fields with 422 and changes nothing", async () => {
      const channel = await json(await post("/api/v1/channels", { client_id: "patch:2", bot_id: "default" }))
      const wrong = await patch(channel.id, { name: "ok", require_mention: "yes" })
      expect(wrong.status).toBe(422)
      expect((await json(wrong)).detail.map((issue: { loc: Array<string> }) => issue.loc)).toEqual([["body", "require_mention"]])
      const unknown = await patch(channel.id, { name: "ok", active_session_id: "00000000-0000-4000-8000-000000000000" })
      expect(unknown.status).toBe(422)
      expect((await json(unknown)).detail.map((issue: { loc: Array<string> }) => issue.loc)).toEqual([["body", "active_session_id"]])
      expect(await json(await server.request(`/api/v1/channels/${channel.id}`))).toEqual(channel)
    })

    it("answers 404 for an unknown channel", async () => {
      const response = await patch("00000000-0000-4000-8000-000000000000", { name: "x" })
      expect(response.status).toBe(404)
    })
  })

  describe("DELETE /api/v1/channels/{id}", () => {
    it("deletes with 204; the channel is gone and can be made again", async () => {
      const channel = await json(await post("/api/v1/channels", { client_id: "delete:1", bot_id: "default" }))
      const response = await server.request(`/api/v1/channels/${channel.id}`, { method: "DELETE" })
      expect(response.status).toBe(204)
      expect(await response.text()).toBe("")
      expect((await server.request(`/api/v1/channels/${channel.id}`)).status).toBe(404)
      expect((await server.request(`/api/v1/channels/${channel.id}`, { method: "DELETE" })).status).toBe(404)
      const again = await json(await post("/api/v1/channels", { client_id: "delete:1", bot_id: "default" }))
      expect(again.id).not.toBe(channel.id)
    })
  })

  describe("scopes", () => {
    it("each route asks for its scope; channels:write implies channels.config:write", async () => {
      const reader = await createKey(server, ["channels:read"])
      const writer = await createKey(server, ["channels:write"])
      const configurer = await createKey(server, ["channels.config:write"])
      const channel = await json(await post("/api/v1/channels", { client_id: "scopes:1", bot_id: "default" }))

      expect((await server.request("/api/v1/channels", { auth: reader.key })).status).toBe(200)
      expect((await server.request(`/api/v1/channels/${channel.id}`, { auth: reader.key })).status).toBe(200)
      const denied = await post("/api/v1/channels", { client_id: "scopes:2", bot_id: "default" }, reader.key)
      expect(denied.status).toBe(403)
      expect(await json(denied)).toEqual({ detail: "Missing required scope: channels:write" })
      expect((await post("/api/v1/admin/channels", { name: "n", bot_id: "default" }, reader.key)).status).toBe(403)
      expect((await patch(channel.id, { name: "by reader" }, reader.key)).status).toBe(403)

      expect((await post("/api/v1/channels", { client_id: "scopes:2", bot_id: "default" }, writer.key)).status).toBe(200)
      expect((await patch(channel.id, { name: "by writer" }, writer.key)).status).toBe(200)
      expect((await server.request("/api/v1/channels", { auth: writer.key })).status).toBe(403)

      expect((await patch(channel.id, { require_mention: true }, configurer.key)).status).toBe(200)
      const cannotDelete = await server.request(`/api/v1/channels/${channel.id}`, { method: "DELETE", auth: configurer.key })
      expect(cannotDelete.status).toBe(403)
      expect((await server.request("/api/v1/channels", { auth: null })).status).toBe(401)
    })

    it("publishes each route's scope in the OpenAPI document", async () => {
      const spec = await json(await server.request("/openapi.json", { auth: null }))
      expect(spec.paths["/api/v1/admin/channels"].post["x-required-scope"]).toBe("channels:write")
      expect(spec.paths["/api/v1/channels"].post["x-required-scope"]).toBe("channels:write")
      expect(spec.paths["/api/v1/channels"].get["x-required-scope"]).toBe("channels:read")
      expect(spec.paths["/api/v1/channels/{id}"].get["x-required-scope"]).toBe("channels:read")
      expect(spec.paths["/api/v1/channels/{id}"].patch["x-required-scope"]).toBe("channels.config:write")
      expect(spec.paths["/api/v1/channels/{id}"].delete["x-required-scope"]).toBe("channels:write")
      // This group's part of the document validates on its own (other groups are their owners' tests).
      const paths = ["/api/v1/admin/channels", "/api/v1/channels", "/api/v1/channels/{id}"]
      const ownPart = { ...spec, paths: Object.fromEntries(paths.map((p) => [p, spec.paths[p]])) }
      const result = await new Validator().validate(ownPart)
      expect(result.errors ?? []).toEqual([])
    })
  })

  if (backend === "postgres") {
    it("get-or-create is race-free across two server processes on one database", async () => {
      const second = await startServer({ backend, db: server.db })
      try {
        const responses = await Promise.all(
          Array.from({ length: 20 }, (_, i) =>
            (i % 2 === 0 ? server : second).request("/api/v1/channels", {
              method: "POST",
              body: JSON.stringify({ client_id: "cli:two-processes", bot_id: "default" })
            }))
        )
        expect(responses.map((r) => r.status)).toEqual(responses.map(() => 200))
        const ids = new Set((await Promise.all(responses.map(json))).map((c) => c.id))
        expect(ids.size).toBe(1)
      } finally {
        await second.close()
      }
    })
  }
})
