/**
 * `/api/v1/admin/skills` through the typed client: the skills a bot may name, the project's and an
 * integration's, with their titles and not their content; bots:read to list them.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createKey } from "../auth/helpers.ts"
import { startServer, type TestServer } from "../support/server.ts"

describe("skills", () => {
  let server: TestServer

  beforeAll(async () => {
    server = await startServer({ backend: "pglite" })
  })
  afterAll(async () => {
    await server?.close()
  })

  it("lists the project's skills and the integrations' by id and title, without their content", async () => {
    const { skills } = await server.call((client) => client.skills.list())
    expect(skills).toContainEqual({ id: "concise-answers", title: expect.any(String), source: "core" })
    expect(skills).toContainEqual({ id: "integrations/example/example-usage", title: expect.any(String), source: "example" })
    expect(skills.every((skill) => !("content" in skill))).toBe(true)
  })

  it("needs bots:read", async () => {
    const reader = await createKey(server, ["bots:read"])
    const other = await createKey(server, ["todos:read"])
    expect((await server.request("/api/v1/admin/skills", { auth: reader.key })).status).toBe(200)
    expect((await server.request("/api/v1/admin/skills", { auth: other.key })).status).toBe(403)
  })
})
