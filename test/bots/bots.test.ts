/** Bots over HTTP: YAML files loaded at startup, admin CRUD, the unversioned list. */
import * as fs from "node:fs"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { backends, tempDir } from "../support/database.ts"
import { json, startServer, type TestServer } from "../support/server.ts"

describe.each(backends)("bots (%s)", (backend) => {
  let server: TestServer
  const extraDir = tempDir("cairn-bots-")
  beforeAll(async () => {
    fs.writeFileSync(
      path.join(extraDir, "helper.yaml"),
      "id: helper\nname: Helper\nsystem_prompt: You help.\ntools: [current_time]\ntool_policies:\n  current_time: require_approval\n"
    )
    fs.writeFileSync(path.join(extraDir, "broken.yaml"), "id: Not A Valid Id!\nname: 3\n")
    server = await startServer({ backend, env: { BOTS_DIR: extraDir } })
  })
  afterAll(async () => {
    await server?.close()
    fs.rmSync(extraDir, { recursive: true, force: true })
  })

  it("loads the default bot and BOTS_DIR files, skipping a broken one", async () => {
    const response = await server.request("/api/v1/admin/bots")
    expect(response.status).toBe(200)
    const { bots } = await json(response)
    const ids = bots.map((bot: { id: string }) => bot.id)
    expect(ids).toContain("default")
    expect(ids).toContain("helper")
    expect(ids).not.toContain("Not A Valid Id!")
    const helper = bots.find((bot: { id: string }) => bot.id === "helper")
    expect(helper).toMatchObject({
      name: "Helper",
      tools: ["current_time"],
      tool_policies: { current_time: "require_approval" },
      source: "file"
    })
    const legacy = await json(await server.request("/bots"))
    expect(legacy.map((bot: { id: string }) => bot.id)).toEqual(ids)
  })

  it("creates, reads, updates and deletes a bot", async () => {
    const created = await server.request("/api/v1/admin/bots", {
      method: "POST",
      body: JSON.stringify({ id: "writer", name: "Writer", model: "fake/model-a", fallback_models: ["fake/model-b"] })
    })
    expect(created.status).toBe(201)
    expect(await json(created)).toMatchObject({ id: "writer", name: "Writer", model: "fake/model-a", source: "api", max_iterations: 10 })

    const duplicate = await server.request("/api/v1/admin/bots", { method: "POST", body: JSON.stringify({ id: "writer", name: "Again" }) })
    expect(duplicate.status).toBe(409)

    const updated = await server.request("/api/v1/admin/bots/writer", {
      method: "PUT",
      body: JSON.stringify({ system_prompt: "Write well." })
    })
    expect(updated.status).toBe(200)
    expect(await json(updated)).toMatchObject({ name: "Writer", system_prompt: "Write well.", model: "fake/model-a" })

    const fetched = await json(await server.request("/api/v1/admin/bots/writer"))
    expect(fetched.system_prompt).toBe("Write well.")

    expect((await server.request("/api/v1/admin/bots/writer", { method: "DELETE" })).status).toBe(204)
    expect((await server.request("/api/v1/admin/bots/writer")).status).toBe(404)
    expect((await server.request("/api/v1/admin/bots/writer", { method: "DELETE" })).status).toBe(404)
  })

  it("refuses bad input with 422 and protects the default bot", async () => {
    const badId = await server.request("/api/v1/admin/bots", { method: "POST", body: JSON.stringify({ id: "Bad Id", name: "" }) })
    expect(badId.status).toBe(422)
    const body = await json(badId)
    const locs = body.detail.map((issue: { loc: Array<string> }) => issue.loc.join("."))
    expect(locs).toContain("body.id")
    expect(locs).toContain("body.name")

    const badUpdate = await server.request("/api/v1/admin/bots/default", { method: "PUT", body: JSON.stringify({ temperature: 7 }) })
    expect(badUpdate.status).toBe(422)
    expect((await json(await server.request("/api/v1/admin/bots/default"))).temperature).toBeNull()

    const deleteDefault = await server.request("/api/v1/admin/bots/default", { method: "DELETE" })
    expect(deleteDefault.status).toBe(409)
  })
})
