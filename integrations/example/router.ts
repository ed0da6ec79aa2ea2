import { defineRoutes, respond } from "../../src/sdk/index.ts"
import { greeting } from "./config.ts"
import { stats } from "./stats.ts"

export default defineRoutes([
  {
    method: "GET",
    path: "/ping",
    description: "Health check of the example integration",
    scope: "operations:read",
    handler: async (_request, cairn) => ({ status: "ok", integration: "example", greeting: await greeting(cairn) })
  },
  {
    method: "POST",
    path: "/ingest",
    description: "Ingest a document into the example integration's store",
    scope: "documents:write",
    handler: async (request, cairn) => {
      const body = (request.body ?? {}) as { title?: unknown; content?: unknown; session_id?: unknown }
      if (typeof body.title !== "string" || typeof body.content !== "string" || !body.content.trim()) {
        return respond(422, { detail: [{ loc: ["body"], msg: "title and content (strings) are required", type: "missing" }] })
      }
      const id = await cairn.ingestDocument(
        "example",
        body.title,
        body.content,
        typeof body.session_id === "string" ? body.session_id : null,
        { source: "example" }
      )
      return respond(201, { document_id: id })
    }
  },
  {
    method: "GET",
    path: "/stats",
    description: "How many bot responses the example's hook has seen",
    scope: "settings:read",
    handler: async (_request, cairn) => ({
      responses_seen: stats.responsesSeen,
      // Written by the stats-snapshot worker (worker.ts).
      latest_snapshot: (await cairn.store.get("snapshot:latest")) ?? null,
      snapshot_times: await cairn.store.lru("snapshot-times", 24).members()
    })
  }
])
