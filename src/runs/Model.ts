/** What the run engine's routes answer: a run's events as Server-Sent Events. */
import { HttpApiSchema } from "@effect/platform"
import { JSONSchema } from "effect"
import { AgentEvent } from "../agent/Events.ts"

/**
 * The JSON Schema of one event's `data`. OpenAPI 3.1 has no way to type the items of a
 * `text/event-stream` body (3.2's `itemSchema` does), so the body stays a string and carries the
 * event union in an extension. It is inlined: the event structs have no identifier, so nothing here
 * is a `$ref` that would have to resolve against the OpenAPI document's components.
 */
export const eventJsonSchema = JSONSchema.fromAST(AgentEvent.ast, { definitions: {}, target: "openApi3.1" })

export const EventStream = HttpApiSchema.Text({ contentType: "text/event-stream" }).annotations({
  description: "Server-Sent Events: `id: <seq>` and `data: <json with type>` per event; `response` is last. " +
    "Each event's JSON is described by `x-event-schema`.",
  jsonSchema: { "x-event-schema": eventJsonSchema }
})
