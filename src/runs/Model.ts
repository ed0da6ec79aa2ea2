/** What the run engine's routes answer: a run's events as Server-Sent Events. */
import { HttpApiSchema } from "@effect/platform"

export const EventStream = HttpApiSchema.Text({ contentType: "text/event-stream" }).annotations({
  description: "Server-Sent Events: `id: <seq>` and `data: <json with type>` per event; `response` is last"
})
