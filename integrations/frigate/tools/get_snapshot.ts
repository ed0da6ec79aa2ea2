/**
 * The snapshot of a Frigate event, now (it may be better than the one attached to the detection's
 * message). A tool answers text, so the image itself reaches the model as the attachment of the
 * detection's message; this tool says whether a snapshot exists now, its type and size, and the
 * event as Frigate describes it.
 */
import { defineTool } from "../../../src/sdk/index.ts"
import { readConfig } from "../config.ts"
import { fetchSnapshot } from "../snapshot.ts"
import { cairnContext } from "../state.ts"

export default defineTool({
  schema: {
    type: "function",
    function: {
      name: "get_snapshot",
      description:
        "Fetches the current snapshot of a Frigate camera event (by its event id) and reports whether it exists, its image type and size, and the event's details from Frigate",
      parameters: {
        type: "object",
        properties: { event_id: { type: "string", description: "The Frigate event id, as the detection's context gives it" } },
        required: ["event_id"]
      }
    }
  },
  timeoutMs: 30_000,
  effect: "read",
  execute: async (args, context) => {
    const cairn = cairnContext()
    const read = readConfig(await cairn.settings.all())
    if (!read.ok) return JSON.stringify({ error: read.error })
    const eventId = typeof args.event_id === "string" ? args.event_id : ""
    if (!/^[A-Za-z0-9._-]{1,128}$/.test(eventId) || eventId.includes("..")) {
      return JSON.stringify({ error: "event_id is not a Frigate event id" })
    }
    const snapshot = await fetchSnapshot(cairn, read.config, eventId, context.signal)
    let event: unknown = null
    try {
      const response = await cairn.http.request(`${read.config.frigateUrl}/api/events/${eventId}`, {
        timeoutMs: 5000,
        signal: context.signal
      })
      if (response.ok) event = response.json()
    } catch {
      // The event's details are a bonus; the snapshot is the answer.
    }
    if (!snapshot.ok) return JSON.stringify({ event_id: eventId, snapshot: null, error: snapshot.error, event })
    return JSON.stringify({
      event_id: eventId,
      snapshot: { mime_type: snapshot.image.mime_type, bytes: Math.floor((snapshot.image.data.length * 3) / 4) },
      note: "The detection's snapshot is attached to its message as an image; look at it there.",
      event
    })
  }
})
