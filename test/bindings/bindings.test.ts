/** Channel integration bindings over HTTP and through the service, on both database backends. */
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Bindings } from "../../src/bindings/Bindings.ts"
import { createKey } from "../auth/helpers.ts"
import { backends } from "../support/database.ts"
import { json, startServer, type TestServer } from "../support/server.ts"

const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

describe.each(backends)("channel integration bindings (%s)", (backend) => {
  let server: TestServer
  let channelA: string
  let channelB: string
  const post = (path: string, body: unknown, auth?: string) =>
    server.request(path, { method: "POST", body: JSON.stringify(body), ...(auth ? { auth } : {}) })
  const makeChannel = async (name: string, bot = "default") => {
    const response = await post("/api/v1/admin/channels", { name, bot_id: bot })
    expect(response.status).toBe(201)
    return (await json(response)).id as string
  }

  beforeAll(async () => {
    server = await startServer({ backend })
    expect((await post("/api/v1/admin/bots", { id: "helper", name: "Helper" })).status).toBe(201)
    channelA = await makeChannel("Family chat")
    channelB = await makeChannel("Family chat (helper)", "helper")
  })
  afterAll(async () => {
    await server?.close()
  })

  it("binds an integration with defaults and lists it", async () => {
    const response = await post(`/api/v1/channels/${channelA}/integrations`, {
      integration_type: "msgbridge",
      client_id: "msgbridge:iMessage;+;chat1234"
    })
    expect(response.status).toBe(201)
    const binding = await json(response)
    expect(Object.keys(binding).sort()).toEqual([
      "channel_id",
      "client_id",
      "created_at",
      "hud_preset",
      "id",
      "integration_type",
      "use_bot_wake_word",
      "wake_words"
    ])
    expect(binding).toMatchObject({
      channel_id: channelA,
      integration_type: "msgbridge",
      client_id: "msgbridge:iMessage;+;chat1234",
      wake_words: [],
      use_bot_wake_word: true,
      hud_preset: "default"
    })
    expect(binding.id).toMatch(uuid)
    const listed = await json(await server.request(`/api/v1/channels/${channelA}/integrations`))
    expect(listed).toEqual({ bindings: [binding] })
  })

  it("stores wake words, the bot wake word flag and the HUD preset", async () => {
    const response = await post(`/api/v1/channels/${channelA}/integrations`, {
      integration_type: "mailbox",
      client_id: "mailbox:me@example.org",
      wake_words: ["hey cairn", "Jeeves"],
      use_bot_wake_word: false,
      hud_preset: "none"
    })
    expect(response.status).toBe(201)
    expect(await json(response)).toMatchObject({ wake_words: ["hey cairn", "Jeeves"], use_bot_wake_word: false, hud_preset: "none" })
    const listed = (await json(await server.request(`/api/v1/channels/${channelA}/integrations`))).bindings
    expect(listed.map((b: any) => b.integration_type)).toEqual(["msgbridge", "mailbox"])
  })

  it("refuses bad input with 422 and stores nothing", async () => {
    const cases: Array<[unknown, string]> = [
      [{ integration_type: "msgbridge", client_id: "chat1234" }, "client_id"],
      [{ integration_type: "msgbridge", client_id: ":chat1234" }, "client_id"],
      [{ integration_type: "msgbridge", client_id: "msgbridge:" }, "client_id"],
      [{ integration_type: "msgbridge", client_id: "msgbridge: leading-space" }, "client_id"],
      [{ integration_type: "msgbridge", client_id: "msgbridge:two\nlines" }, "client_id"],
      [{ integration_type: "Msg Bridge", client_id: "msgbridge:x" }, "integration_type"],
      [{ integration_type: "msgbridge", client_id: "msgbridge:x", hud_preset: "fancy" }, "hud_preset"],
      [{ integration_type: "msgbridge", client_id: "msgbridge:x", wake_words: ["  "] }, "wake_words"],
      [{ integration_type: "msgbridge", client_id: "msgbridge:x", use_bot_wake_word: "yes" }, "use_bot_wake_word"],
      [{ client_id: "msgbridge:x" }, "integration_type"]
    ]
    for (const [body, field] of cases) {
      const response = await post(`/api/v1/channels/${channelB}/integrations`, body)
      expect(response.status, JSON.stringify(body)).toBe(422)
      const detail = (await json(response)).detail
      expect(detail.some((issue: any) => issue.loc[0] === "body" && issue.loc[1] === field), JSON.stringify(detail)).toBe(true)
    }
    expect((await json(await server.request(`/api/v1/channels/${channelB}/integrations`))).bindings).toEqual([])
  })

  it("answers 409 for the same binding twice on one channel, and 404 for an unknown channel", async () => {
    const body = { integration_type: "msgbridge", client_id: "msgbridge:iMessage;+;chat1234" }
    const again = await post(`/api/v1/channels/${channelA}/integrations`, body)
    expect(again.status).toBe(409)
    expect((await json(again)).detail).toContain("already bound")
    const missing = await post("/api/v1/channels/00000000-0000-4000-8000-000000000000/integrations", body)
    expect(missing.status).toBe(404)
    expect(await json(missing)).toEqual({ detail: "Channel not found: 00000000-0000-4000-8000-000000000000" })
    expect((await server.request("/api/v1/channels/00000000-0000-4000-8000-000000000000/integrations")).status).toBe(404)
  })

  it("binds one client id to several channels and finds them all by client id", async () => {
    const response = await post(`/api/v1/channels/${channelB}/integrations`, {
      integration_type: "msgbridge",
      client_id: "msgbridge:iMessage;+;chat1234",
      wake_words: ["helper"]
    })
    expect(response.status).toBe(201)
    const found = await server.run(
      Effect.flatMap(Bindings, (bindings) => bindings.findChannelsByClientId("msgbridge:iMessage;+;chat1234"))
    )
    expect(found.map((entry) => [entry.channel.id, entry.channel.bot_id, entry.binding.wake_words])).toEqual([
      [channelA, "default", []],
      [channelB, "helper", ["helper"]]
    ])
    const mail = await server.run(Effect.flatMap(Bindings, (bindings) => bindings.findChannelsByClientId("mailbox:me@example.org")))
    expect(mail.map((entry) => entry.channel.id)).toEqual([channelA])
    const otherType = await server.run(
      Effect.flatMap(Bindings, (bindings) => bindings.findChannelsByClientId("msgbridge:iMessage;+;chat1234", "mailbox"))
    )
    expect(otherType).toEqual([])
    const unbound = await server.run(Effect.flatMap(Bindings, (bindings) => bindings.findChannelsByClientId("msgbridge:nobody")))
    expect(unbound).toEqual([])
    const forChannel = await server.run(Effect.flatMap(Bindings, (bindings) => bindings.forChannel(channelB)))
    expect(forChannel.map((b) => b.client_id)).toEqual(["msgbridge:iMessage;+;chat1234"])
  })

  it("deletes a binding by id; a second delete is 404", async () => {
    const listed = (await json(await server.request(`/api/v1/channels/${channelB}/integrations`))).bindings
    const id = listed[0].id
    // The binding id must belong to the channel in the path.
    expect((await server.request(`/api/v1/channels/${channelA}/integrations/${id}`, { method: "DELETE" })).status).toBe(404)
    const deleted = await server.request(`/api/v1/channels/${channelB}/integrations/${id}`, { method: "DELETE" })
    expect(deleted.status).toBe(204)
    expect((await json(await server.request(`/api/v1/channels/${channelB}/integrations`))).bindings).toEqual([])
    expect((await server.request(`/api/v1/channels/${channelB}/integrations/${id}`, { method: "DELETE" })).status).toBe(404)
    const found = await server.run(
      Effect.flatMap(Bindings, (bindings) => bindings.findChannelsByClientId("msgbridge:iMessage;+;chat1234"))
    )
    expect(found.map((entry) => entry.channel.id)).toEqual([channelA])
  })

  it("changes a binding's wake words, bot-name flag and HUD preset with PATCH, only the fields sent", async () => {
    const channel = await makeChannel("Editable")
    const created = await json(
      await post(`/api/v1/channels/${channel}/integrations`, {
        integration_type: "msgbridge",
        client_id: "msgbridge:editable",
        wake_words: ["hey"]
      })
    )
    const patch = (body: unknown, bindingId = created.id as string) =>
      server.request(`/api/v1/channels/${channel}/integrations/${bindingId}`, { method: "PATCH", body: JSON.stringify(body) })
    const changed = await patch({ wake_words: ["computer", "robot"], hud_preset: "none" })
    expect(changed.status).toBe(200)
    expect(await json(changed)).toMatchObject({
      id: created.id,
      wake_words: ["computer", "robot"],
      use_bot_wake_word: true,
      hud_preset: "none"
    })
    expect(await json(await patch({ use_bot_wake_word: false }))).toMatchObject({
      wake_words: ["computer", "robot"],
      use_bot_wake_word: false,
      hud_preset: "none"
    })
    const listed = await json(await server.request(`/api/v1/channels/${channel}/integrations`))
    expect(listed.bindings[0]).toMatchObject({ wake_words: ["computer", "robot"], use_bot_wake_word: false, hud_preset: "none" })
    for (const bad of [{ hud_preset: "loud" }, { wake_words: [" "] }, { client_id: "msgbridge:other" }]) {
      expect((await patch(bad)).status, JSON.stringify(bad)).toBe(422)
    }
    expect((await patch({ hud_preset: "default" }, "00000000-0000-4000-8000-000000000000")).status).toBe(404)
    const writer = await createKey(server, ["channels.integrations:read"])
    expect(
      (await server.request(`/api/v1/channels/${channel}/integrations/${created.id}`, {
        method: "PATCH",
        body: JSON.stringify({ hud_preset: "default" }),
        auth: writer.key
      })).status
    ).toBe(403)
  })

  it("drops a channel's bindings with the channel", async () => {
    const channel = await makeChannel("Short-lived")
    expect((await post(`/api/v1/channels/${channel}/integrations`, { integration_type: "msgbridge", client_id: "msgbridge:temp" })).status)
      .toBe(201)
    expect((await server.request(`/api/v1/channels/${channel}`, { method: "DELETE" })).status).toBe(204)
    const found = await server.run(Effect.flatMap(Bindings, (bindings) => bindings.findChannelsByClientId("msgbridge:temp")))
    expect(found).toEqual([])
  })

  it("checks the scopes channels.integrations:read and :write", async () => {
    const reader = await createKey(server, ["channels.integrations:read"])
    const writer = await createKey(server, ["channels.integrations:write"])
    const body = { integration_type: "msgbridge", client_id: "msgbridge:scoped" }
    expect((await server.request(`/api/v1/channels/${channelB}/integrations`, { auth: reader.key })).status).toBe(200)
    expect((await post(`/api/v1/channels/${channelB}/integrations`, body, reader.key)).status).toBe(403)
    expect((await server.request(`/api/v1/channels/${channelB}/integrations`, { auth: writer.key })).status).toBe(403)
    expect((await post(`/api/v1/channels/${channelB}/integrations`, body, writer.key)).status).toBe(201)
    expect((await server.request(`/api/v1/channels/${channelB}/integrations`, { auth: null })).status).toBe(401)
  })
})
