/**
 * One path schema for UUID ids (`idPath`): an id that is not a UUID is simply not found (the spec),
 * answered 404 with the same detail as an unknown id, on every route that uses it.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { backends } from "../support/database.ts"
import { json, startServer, type TestServer } from "../support/server.ts"

describe.each(backends)("ids that are not UUIDs (%s)", (backend) => {
  let server: TestServer
  beforeAll(async () => {
    server = await startServer({ backend })
  })
  afterAll(async () => {
    await server?.close()
  })

  const post = (body: unknown) => ({ method: "POST", body: JSON.stringify(body) })

  it("are not found, with the detail an unknown id gets", async () => {
    const cases: ReadonlyArray<readonly [string, RequestInit | undefined, string]> = [
      ["/api/v1/tasks/not-a-uuid", undefined, "Task not found: not-a-uuid"],
      ["/api/v1/tasks/not-a-uuid/cancel", { method: "POST" }, "Task not found: not-a-uuid"],
      ["/api/v1/sessions/not-a-uuid/messages", undefined, "Session not found: not-a-uuid"],
      ["/api/v1/sessions/not-a-uuid/messages", post({ content: "x" }), "Session not found: not-a-uuid"],
      ["/api/v1/sessions/not-a-uuid/stream", undefined, "Session not found: not-a-uuid"],
      ["/sessions/not-a-uuid", undefined, "Session not found: not-a-uuid"],
      ["/sessions/not-a-uuid", { method: "DELETE" }, "Session not found: not-a-uuid"],
      ["/api/v1/approvals/not-a-uuid/decide", post({ approved: true }), "Approval not found: not-a-uuid"],
      ["/api/v1/channels/not-a-uuid", undefined, "Channel not found: not-a-uuid"],
      ["/api/v1/channels/not-a-uuid", { method: "DELETE" }, "Channel not found: not-a-uuid"],
      ["/api/v1/channels/not-a-uuid/integrations", undefined, "Channel not found: not-a-uuid"],
      [
        "/api/v1/channels/00000000-0000-4000-8000-000000000000/integrations/not-a-uuid",
        { method: "DELETE" },
        "Binding not found: not-a-uuid"
      ],
      ["/api/v1/channels/not-a-uuid/workspace/files", undefined, "Channel not found: not-a-uuid"],
      ["/api/v1/channels/not-a-uuid/carapaces", undefined, "Channel not found: not-a-uuid"],
      ["/api/v1/admin/api-keys/not-a-uuid", undefined, "API key not found: not-a-uuid"],
      ["/api/v1/admin/users/not-a-uuid", { method: "DELETE" }, "User not found: not-a-uuid"],
      ["/api/v1/documents/not-a-uuid", undefined, "Document not-a-uuid not found"],
      // The path is decoded first: no body or query is worth checking for a thing that is not there.
      ["/api/v1/sessions/not-a-uuid/messages", post({}), "Session not found: not-a-uuid"],
      ["/api/v1/sessions/not-a-uuid/stream?after=-1", undefined, "Session not found: not-a-uuid"]
    ]
    for (const [path, init, detail] of cases) {
      const reply = await server.request(path, init)
      expect(reply.status, `${init?.method ?? "GET"} ${path}`).toBe(404)
      expect(await json(reply), `${init?.method ?? "GET"} ${path}`).toEqual({ detail })
    }
  })

  it("reach the handler when well formed, so an unknown one gets the same answer", async () => {
    const unknown = "00000000-0000-4000-8000-000000000000"
    const reply = await server.request(`/api/v1/tasks/${unknown}`)
    expect(reply.status).toBe(404)
    expect(await json(reply)).toEqual({ detail: `Task not found: ${unknown}` })
    const session = await server.request(`/sessions/${unknown}`)
    expect(await json(session)).toEqual({ detail: `Session not found: ${unknown}` })
  })
})
