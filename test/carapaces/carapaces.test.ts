/** Carapaces over HTTP and through the service, on both database backends. */
import { Effect } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Carapaces } from "../../src/carapaces/Carapaces.ts"
import { createKey } from "../auth/helpers.ts"
import { backends, tempDir } from "../support/database.ts"
import { json, startServer, type TestServer } from "../support/server.ts"

describe.each(backends)("carapaces (%s)", (backend) => {
  let server: TestServer
  let integrationDir: string
  const send = (method: string, url: string, body?: unknown, auth?: string) =>
    server.request(url, { method, ...(body === undefined ? {} : { body: JSON.stringify(body) }), ...(auth ? { auth } : {}) })
  const create = (body: unknown) => send("POST", "/api/v1/carapaces", body)
  const carapaces = <A, E>(f: (service: Carapaces) => Effect.Effect<A, E>) => server.run(Effect.flatMap(Carapaces, f))
  const makeChannel = async (name: string) => {
    const response = await send("POST", "/api/v1/admin/channels", { name, bot_id: "helper" })
    expect(response.status).toBe(201)
    return (await json(response)).id as string
  }

  beforeAll(async () => {
    server = await startServer({ backend })
    expect((await send("POST", "/api/v1/admin/bots", { id: "helper", name: "Helper" })).status).toBe(201)
    integrationDir = tempDir("cairn-carapaces-")
  })
  afterAll(async () => {
    await server?.close()
    fs.rmSync(integrationDir, { recursive: true, force: true })
  })

  it("serves the project's carapace files", async () => {
    const basics = await json(await server.request("/api/v1/carapaces/basics"))
    expect(basics).toMatchObject({
      id: "basics",
      name: "Basics",
      tools: ["current_time"],
      skills: ["concise-answers"],
      includes: [],
      source: "file",
      origin: "core"
    })
  })

  it("creates carapaces and flattens their includes", async () => {
    const mission = await create({
      id: "ops-control",
      name: "Mission control",
      tools: ["list_tasks"],
      skills: ["mission"],
      includes: ["basics"]
    })
    expect(mission.status).toBe(201)
    expect(await json(mission)).toMatchObject({ id: "ops-control", source: "api", origin: "api", description: "" })
    const feeds = await create({
      id: "demo-feeds",
      name: "Mailbox feeds",
      tools: ["check_mailbox_status", "trigger_mailbox_poll", "query_feed_store"],
      includes: ["ops-control"]
    })
    expect(feeds.status).toBe(201)
    const resolved = await json(await server.request("/api/v1/carapaces/demo-feeds/resolved"))
    expect(resolved).toEqual({
      carapaces: ["demo-feeds", "ops-control", "basics"],
      tools: ["check_mailbox_status", "trigger_mailbox_poll", "query_feed_store", "list_tasks", "current_time"],
      skills: ["mission", "concise-answers"],
      missing: []
    })
    const list = (await json(await server.request("/api/v1/carapaces"))).carapaces.map((c: any) => c.id)
    // mailbox-feeds comes from the bundled mailbox integration.
    expect(list).toEqual(["basics", "demo-feeds", "mailbox-feeds", "mission-control", "ops-control"])
  })

  it("refuses include cycles at write time with 422 naming the cycle, and changes nothing", async () => {
    const self = await create({ id: "narcissus", name: "Self", includes: ["narcissus"] })
    expect(self.status).toBe(422)
    expect((await json(self)).detail).toEqual([
      { loc: ["body", "includes"], msg: "Carapace include cycle: narcissus -> narcissus", type: "include_cycle" }
    ])
    expect((await server.request("/api/v1/carapaces/narcissus")).status).toBe(404)

    const loop = await send("PUT", "/api/v1/carapaces/basics", { includes: ["demo-feeds"] })
    expect(loop.status).toBe(422)
    expect((await json(loop)).detail[0]).toEqual({
      loc: ["body", "includes"],
      msg: "Carapace include cycle: basics -> demo-feeds -> ops-control -> basics",
      type: "include_cycle"
    })
    expect(await json(await server.request("/api/v1/carapaces/basics"))).toMatchObject({ includes: [], source: "file" })
  })

  it("refuses bad input: unknown includes, bad ids, duplicates, unknown fields", async () => {
    const unknown = await create({ id: "lonely", name: "Lonely", includes: ["basics", "ghost"] })
    expect(unknown.status).toBe(422)
    expect((await json(unknown)).detail).toEqual([{
      loc: ["body", "includes", 1],
      msg: "Unknown carapace: ghost",
      type: "unknown_carapace"
    }])
    expect((await create({ id: "Bad Id", name: "x" })).status).toBe(422)
    expect((await create({ id: "nameless" })).status).toBe(422)
    const duplicate = await create({ id: "basics", name: "Again" })
    expect(duplicate.status).toBe(409)
    expect((await send("PUT", "/api/v1/carapaces/basics", { colour: "red" })).status).toBe(422)
    expect((await send("PUT", "/api/v1/carapaces/ghost", { name: "x" })).status).toBe(404)
  })

  it("updates only the fields sent; a file carapace edited through the API becomes an api one", async () => {
    const updated = await send("PUT", "/api/v1/carapaces/ops-control", { description: "Tasks and todos" })
    expect(updated.status).toBe(200)
    expect(await json(updated)).toMatchObject({ description: "Tasks and todos", tools: ["list_tasks"], includes: ["basics"] })
  })

  it("attaches carapaces to a bot and a channel, and forTurn unions them", async () => {
    const channel = await makeChannel("Ops")
    expect((await send("PUT", "/api/v1/admin/bots/helper", { carapaces: ["basics"] })).status).toBe(200)
    const bad = await send("PUT", `/api/v1/channels/${channel}/carapaces`, { carapaces: ["ops-control", "ghost"] })
    expect(bad.status).toBe(422)
    expect((await json(bad)).detail).toEqual([{ loc: ["body", "carapaces", 1], msg: "Unknown carapace: ghost", type: "unknown_carapace" }])
    const set = await send("PUT", `/api/v1/channels/${channel}/carapaces`, { carapaces: ["ops-control"] })
    expect(set.status).toBe(200)
    expect(await json(set)).toEqual({ channel_id: channel, carapaces: ["ops-control"] })
    expect(await json(await server.request(`/api/v1/channels/${channel}/carapaces`))).toEqual({
      channel_id: channel,
      carapaces: ["ops-control"]
    })

    const botOnly = await carapaces((service) => service.forTurn("helper"))
    expect(botOnly).toEqual({ carapaces: ["basics"], tools: ["current_time"], skills: ["concise-answers"] })
    const withChannel = await carapaces((service) => service.forTurn("helper", channel))
    expect(withChannel).toEqual({
      carapaces: ["basics", "ops-control"],
      tools: ["current_time", "list_tasks"],
      skills: ["concise-answers", "mission"]
    })
    expect(await carapaces((service) => service.forTurn("default", channel))).toMatchObject({ carapaces: ["ops-control", "basics"] })
    expect((await send("GET", "/api/v1/channels/00000000-0000-4000-8000-000000000000/carapaces")).status).toBe(404)
  })

  it("injects an integration's activated carapaces into channels bound to it", async () => {
    const bound = await makeChannel("Mail inbox")
    const unbound = await makeChannel("Not mail")
    const binding = await send("POST", `/api/v1/channels/${bound}/integrations`, {
      integration_type: "demo",
      client_id: "demo:me@example.org"
    })
    expect(binding.status).toBe(201)
    await carapaces((service) => service.activate("demo", ["demo-feeds"]))
    const turn = await carapaces((service) => service.forTurn("default", bound))
    expect(turn.carapaces).toEqual(["demo-feeds", "ops-control", "basics"])
    expect(turn.tools).toContain("query_feed_store")
    expect((await carapaces((service) => service.forTurn("default", unbound))).carapaces).toEqual([])
    // Activation replaces what the integration named before.
    await carapaces((service) => service.activate("demo", ["basics"]))
    expect((await carapaces((service) => service.forTurn("default", bound))).carapaces).toEqual(["basics"])
  })

  it("registers an integration's carapace files; a file cycle is rejected when resolved and left out of turns", async () => {
    fs.writeFileSync(path.join(integrationDir, "ping.yaml"), "name: Ping\ntools: [ping]\nincludes: [basics]\n")
    fs.writeFileSync(path.join(integrationDir, "loop-a.yml"), "id: loop-a\nname: Loop A\ntools: [a]\nincludes: [loop-b]\n")
    fs.writeFileSync(path.join(integrationDir, "loop-b.yaml"), "id: loop-b\nname: Loop B\ntools: [b]\nincludes: [loop-a]\n")
    fs.writeFileSync(path.join(integrationDir, "broken.yaml"), "name: [unclosed\n")
    fs.writeFileSync(path.join(integrationDir, "notes.txt"), "not a carapace")
    const synced = await carapaces((service) => service.registerFromDirectory(integrationDir, "integration:example"))
    expect(synced).toEqual(["loop-a", "loop-b", "ping"])
    expect(await json(await server.request("/api/v1/carapaces/ping"))).toMatchObject({
      source: "file",
      origin: "integration:example",
      tools: ["ping"]
    })

    const cycle = await server.run(Effect.flip(Effect.flatMap(Carapaces, (service) => service.resolve(["ping", "loop-a"]))))
    expect(cycle).toMatchObject({ _tag: "CarapaceCycle", cycle: ["loop-a", "loop-b", "loop-a"] })
    const resolved = await server.request("/api/v1/carapaces/loop-b/resolved")
    expect(resolved.status).toBe(409)
    expect(await json(resolved)).toEqual({ detail: "Carapace include cycle: loop-b -> loop-a -> loop-b" })

    const channel = await makeChannel("Cycle victim")
    expect((await send("PUT", `/api/v1/channels/${channel}/carapaces`, { carapaces: ["ping", "loop-a"] })).status).toBe(422)
    expect((await send("PUT", `/api/v1/channels/${channel}/carapaces`, { carapaces: ["ping"] })).status).toBe(200)
    await carapaces((service) => service.activate("example", ["loop-a"]))
    expect((await send("POST", `/api/v1/channels/${channel}/integrations`, { integration_type: "example", client_id: "example:1" })).status)
      .toBe(201)
    const turn = await carapaces((service) => service.forTurn("default", channel))
    expect(turn.carapaces).toEqual(["ping", "basics"])
    expect(turn.tools).toEqual(["ping", "current_time"])

    // A second registration updates file carapaces but keeps one the API has edited.
    expect((await send("PUT", "/api/v1/carapaces/ping", { description: "edited" })).status).toBe(200)
    fs.writeFileSync(path.join(integrationDir, "ping.yaml"), "name: Ping v2\ntools: [ping, pong]\n")
    fs.writeFileSync(path.join(integrationDir, "loop-b.yaml"), "id: loop-b\nname: Loop B\ntools: [b]\n")
    await carapaces((service) => service.registerFromDirectory(integrationDir, "integration:example"))
    expect(await json(await server.request("/api/v1/carapaces/ping"))).toMatchObject({ name: "Ping", description: "edited", source: "api" })
    expect((await server.request("/api/v1/carapaces/loop-a/resolved")).status).toBe(200)
  })

  it("deletes a carapace unless another includes it; its channel attachments go with it", async () => {
    const included = await send("DELETE", "/api/v1/carapaces/ops-control")
    expect(included.status).toBe(409)
    expect((await json(included)).detail).toBe("Carapace ops-control is included by demo-feeds")
    const channel = await makeChannel("Feeds")
    expect((await send("PUT", `/api/v1/channels/${channel}/carapaces`, { carapaces: ["demo-feeds"] })).status).toBe(200)
    expect((await send("DELETE", "/api/v1/carapaces/demo-feeds")).status).toBe(204)
    expect((await send("GET", "/api/v1/carapaces/demo-feeds")).status).toBe(404)
    expect((await send("DELETE", "/api/v1/carapaces/demo-feeds")).status).toBe(404)
    expect((await json(await server.request(`/api/v1/channels/${channel}/carapaces`))).carapaces).toEqual([])
  })

  it("checks the scopes carapaces:read and carapaces:write", async () => {
    const reader = await createKey(server, ["carapaces:read"])
    const writer = await createKey(server, ["carapaces:write"])
    expect((await send("GET", "/api/v1/carapaces", undefined, reader.key)).status).toBe(200)
    expect((await send("POST", "/api/v1/carapaces", { id: "scoped", name: "Scoped" }, reader.key)).status).toBe(403)
    expect((await send("GET", "/api/v1/carapaces", undefined, writer.key)).status).toBe(403)
    expect((await send("POST", "/api/v1/carapaces", { id: "scoped", name: "Scoped" }, writer.key)).status).toBe(201)
    expect((await server.request("/api/v1/carapaces", { auth: null })).status).toBe(401)
  })
})
