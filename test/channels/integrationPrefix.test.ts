/**
 * `client_id_prefix` (spec: an integration's registered metadata "registers the prefix used to
 * recognise integration client ids"): a channel whose client id starts with a loaded integration's
 * prefix names that integration, in every answer that carries a channel, and the channel list
 * filters by it. Other channels name none.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { CreateChannel } from "../../src/channels/Model.ts"
import { withDefaults } from "../support/client.ts"
import { backends } from "../support/database.ts"
import { startServer, type TestServer } from "../support/server.ts"

const newChannel = withDefaults(CreateChannel)
const page = { limit: 100, offset: 0 }

describe.each(backends)("channels recognised by their integration's client id prefix (%s)", (backend) => {
  let server: TestServer

  beforeAll(async () => {
    server = await startServer({ backend })
  })
  afterAll(async () => {
    await server?.close()
  })

  const ensure = (client_id: string) => server.call((client) => client.channels.ensure({ payload: { client_id, bot_id: "default" } }))

  it("names the integration of a channel whose client id starts with its prefix, and null for others", async () => {
    const bridged = await ensure("msgbridge:+46700000001")
    const mailed = await ensure("mailbox:ops@example.test")
    const plain = await ensure("web:visitor-1")
    expect([bridged.integration, mailed.integration, plain.integration]).toEqual(["msgbridge", "mailbox", null])
    // The same on every route that answers a channel.
    expect((await server.call((client) => client.channels.get({ path: { id: bridged.id } }))).integration).toBe("msgbridge")
    const made = await server.call((client) =>
      client.channels.create({ payload: newChannel({ name: "Family chat", bot_id: "default", client_id: "msgbridge:chat-family" }) })
    )
    expect(made.integration).toBe("msgbridge")
    const renamed = await server.call((client) => client.channels.update({ path: { id: made.id }, payload: { name: "Family" } }))
    expect(renamed.integration).toBe("msgbridge")
  })

  it("lists only an integration's channels when asked, and none for an integration that registered no prefix", async () => {
    const { channels } = await server.call((client) => client.channels.list({ urlParams: { ...page, integration: "msgbridge" } }))
    expect(channels.map((channel) => channel.client_id).sort()).toEqual(["msgbridge:+46700000001", "msgbridge:chat-family"])
    expect(channels.every((channel) => channel.integration === "msgbridge")).toBe(true)
    const none = await server.call((client) => client.channels.list({ urlParams: { ...page, integration: "no-such-integration" } }))
    expect(none.channels).toEqual([])
    const all = await server.call((client) => client.channels.list({ urlParams: page }))
    expect(all.channels.map((channel) => channel.integration).sort()).toEqual(["mailbox", "msgbridge", "msgbridge", null])
  })
})
