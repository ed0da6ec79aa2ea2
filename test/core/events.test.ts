/**
 * The SSE event schema (`src/agent/Events.ts`) against what it stands for: the event table in
 * `docs/api.md`, the bytes the stream wrote before the schema existed, the run log's replay, and
 * the OpenAPI document of the two streaming routes.
 */
import { HttpBody, OpenApi } from "@effect/platform"
import { Effect, Schema, Stream } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import type { Readable } from "node:stream"
import { describe, expect, it } from "vitest"
import { AgentEvent, type AgentEventType, fromStored, type SequencedEvent, StoredEvent, toStored } from "../../src/agent/Events.ts"
import { CairnApi } from "../../src/Api.ts"
import * as Sse from "../../src/runs/Sse.ts"
import { root } from "../support/imports.ts"

/** One event of each type, its keys in the order the emit sites write them. */
const samples: { readonly [T in AgentEventType]: Extract<AgentEvent, { type: T }> } = {
  assistant_text: { type: "assistant_text", text: "Hello", delta: "Hello" },
  thinking_content: { type: "thinking_content", text: "Hmm", delta: "Hmm" },
  tool_start: { type: "tool_start", tool: "add", name: "add", args: { a: 1, b: [2, "x"] }, tool_call_id: "call_1" },
  tool_result: {
    type: "tool_result",
    tool: "add",
    name: "add",
    result: "3",
    duration_ms: 12,
    tool_call_id: "call_1",
    is_error: false
  },
  tool_request: { type: "tool_request", request_id: "r1", tool: "where", name: "where", arguments: {} },
  approval_request: {
    type: "approval_request",
    request_id: "a1",
    approval_id: "a1",
    tool_name: "clock",
    tool: "clock",
    arguments: { zone: "UTC" }
  },
  approval_resolved: { type: "approval_resolved", request_id: "a1", approval_id: "a1", approved: true, tool: "clock", verdict: "approved" },
  delegation_post: { type: "delegation_post", target_bot: "researcher", bot_id: "researcher" },
  secret_warning: { type: "secret_warning", patterns: [{ type: "openai_api_key" }, { type: "jwt" }] },
  rate_limit_wait: { type: "rate_limit_wait", wait_seconds: 1.5 },
  fallback: { type: "fallback", original_model: "m1", fallback_model: "m2" },
  context_budget: { type: "context_budget", used: 1200, limit: 8000, retrieval: 300 },
  "context.bot": { type: "context.bot", tools: ["current_time"], skills: ["concise-answers"], preamble: "" },
  "context.carapaces": { type: "context.carapaces", tools: [], skills: [], preamble: "" },
  "context.execution_config": { type: "context.execution_config", tools: ["@files"], skills: [], preamble: "Write the digest." },
  "context.workspace": { type: "context.workspace", tools: [], skills: [], preamble: "Workspace files: notes.md" },
  "context.retrieval": { type: "context.retrieval", tools: [], skills: [], preamble: "Passages:\n[1] Keepers" },
  rag_rerank: {
    type: "rag_rerank",
    query: "lighthouses",
    candidates: [
      { document_id: "d1", title: "Keepers", source: "library", score: 0.03, similarity: 0.8 },
      { document_id: "d2", title: "Lamps", source: "library", score: 0.02, similarity: null }
    ],
    kept: [{ document_id: "d1", title: "Keepers", source: "library", score: 0.03, similarity: 0.8 }],
    reranker: "hybrid",
    duration_ms: 4
  },
  transcript: { type: "transcript", text: "What time is it?" },
  error: { type: "error", message: "The model call failed: boom" },
  cancelled: { type: "cancelled" },
  queued: { type: "queued", session_id: "s1", task_id: "t1", reason: "session_busy" },
  passive_stored: { type: "passive_stored", session_id: "s1" },
  response: { type: "response", text: "3", tools_used: ["add"], client_actions: [{ kind: "open", url: "x" }], session_id: "s1" }
}

/** The schema's event types with their fields, in declaration order. */
const declared = (members: ReadonlyArray<{ readonly fields: { readonly type: { readonly literals: readonly [string] } } }>) =>
  members.map((member) => [member.fields.type.literals[0], Object.keys(member.fields).filter((key) => key !== "type")] as const)

const schemaTable = declared(AgentEvent.members)

/** The rows of the `| event | fields |` table: each event type and the backquoted field names. */
const docTable = () => {
  const lines = fs.readFileSync(path.join(root, "docs", "api.md"), "utf8").split("\n")
  const header = lines.findIndex((line) => /^\|\s*event\s*\|\s*fields\s*\|$/.test(line.trim()))
  expect(header).toBeGreaterThanOrEqual(0)
  const rows: Array<readonly [string, Array<string>]> = []
  for (const line of lines.slice(header + 2)) {
    if (!line.startsWith("|")) break
    const [type, fields] = line.split("|").slice(1, 3).map((cell) => cell.trim())
    rows.push([type!, [...fields!.matchAll(/`([^`]+)`/g)].map((match) => match[1]!)])
  }
  return rows
}

const encode = Schema.encodeSync(AgentEvent)
const decode = Schema.decodeUnknownSync(AgentEvent)

/** The text of an SSE response's body: what its Node stream gives. */
const body = (response: ReturnType<typeof Sse.response>) =>
  Effect.runPromise(
    Effect.flatMap(response, (answered) =>
      Effect.promise(async () => {
        let text = ""
        for await (const chunk of (answered.body as HttpBody.Raw).body as Readable) text += String(chunk)
        return text
      }))
  )

describe("the SSE event schema", () => {
  it("declares the 24 event types the server sends", () => {
    expect(schemaTable.map(([type]) => type).sort()).toEqual(Object.keys(samples).sort())
    expect(schemaTable).toHaveLength(24)
  })

  it("is what the event table in docs/api.md lists: each type with its fields, in order", () => {
    expect(docTable()).toEqual(schemaTable.map(([type, fields]) => [type, [...fields]]))
  })

  it("round-trips every event type through encode, JSON and decode", () => {
    for (const sample of Object.values(samples)) {
      const wire = JSON.parse(JSON.stringify(encode(sample)))
      expect(wire).toEqual(sample)
      expect(decode(wire)).toEqual(sample)
    }
  })

  it("frames every event with the bytes the stream wrote before it had a schema", () => {
    for (const [index, sample] of Object.values(samples).entries()) {
      expect(Sse.frame({ seq: index + 1, event: sample })).toBe(`id: ${index + 1}\ndata: ${JSON.stringify(sample)}\n\n`)
    }
  })

  it("rejects what is not an event: an unknown type, a missing field, a wrong field type", () => {
    expect(() => decode({ type: "rag_rerank" })).toThrow()
    expect(() => decode({ type: "tool_result", tool: "add", name: "add", result: "3" })).toThrow()
    expect(() => decode({ ...samples.rate_limit_wait, wait_seconds: "soon" })).toThrow()
    expect(() => encode({ type: "error" } as unknown as AgentEvent)).toThrow()
  })

  it("ends the stream with error then response when an event does not encode", async () => {
    const events = Stream.make(
      { seq: 1, event: samples.assistant_text },
      { seq: 2, event: { type: "tool_start", tool: "add" } as unknown as AgentEvent },
      { seq: 3, event: samples.response }
    )
    const text = await body(Sse.response(events, "s1"))
    expect(text).toBe(
      Sse.frame({ seq: 1, event: samples.assistant_text }) +
        Sse.frame({ seq: 3, event: { type: "error", message: "The event stream failed" } }) +
        Sse.frame({ seq: 4, event: { type: "response", text: "", tools_used: [], client_actions: [], session_id: "s1" } })
    )
  })

  it("ends a pushed stream (a live run's) the same way, without the failure reaching the run that pushed", async () => {
    const thrown: Array<unknown> = []
    const pushed: Sse.EventSource<never> = (push) =>
      Effect.sync(() => {
        const run = (items: ReadonlyArray<SequencedEvent>) => {
          try {
            push.items(items)
          } catch (error) {
            thrown.push(error)
          }
        }
        run([{ seq: 1, event: samples.assistant_text }])
        // Later batches come from the run's own steps, after the response has started.
        setTimeout(() => {
          run([{ seq: 2, event: { type: "tool_start", tool: "add" } as unknown as AgentEvent }])
          run([{ seq: 3, event: samples.response }])
          push.end()
        }, 10)
      })
    const text = await body(Sse.response(pushed, "s1"))
    expect(text).toBe(
      Sse.frame({ seq: 1, event: samples.assistant_text }) +
        Sse.frame({ seq: 3, event: { type: "error", message: "The event stream failed" } }) +
        Sse.frame({ seq: 4, event: { type: "response", text: "", tools_used: [], client_actions: [], session_id: "s1" } })
    )
    expect(thrown).toEqual([])
  })
})

describe("the run log", () => {
  /** Through the database: the stored form as JSON, read back with jsonb's key order (shortest key first). */
  const viaJsonb = (events: ReadonlyArray<AgentEvent>) =>
    events.map((event, index) => {
      const stored = JSON.parse(JSON.stringify(toStored(event))) as Record<string, unknown>
      const reordered = Object.fromEntries(Object.entries(stored).sort(([a], [b]) => a.length - b.length || (a < b ? -1 : 1)))
      return { seq: index + 1, event: reordered as unknown }
    })

  it("stores every event type in a form that decodes back to it", () => {
    const storedTypes = declared(StoredEvent.members).map(([type]) => type)
    expect(storedTypes.sort()).toEqual(schemaTable.map(([type]) => type).sort())
    const events = Object.values(samples)
    expect(fromStored(viaJsonb(events))).toEqual(events.map((event, index) => ({ seq: index + 1, event })))
  })

  it("stores only the delta of text events and rebuilds the text so far, anew after a tool call", () => {
    const events: Array<AgentEvent> = [
      { type: "assistant_text", text: "Let", delta: "Let" },
      { type: "thinking_content", text: "I", delta: "I" },
      { type: "assistant_text", text: "Let me", delta: " me" },
      { type: "thinking_content", text: "I think", delta: " think" },
      samples.tool_start,
      { type: "assistant_text", text: "It", delta: "It" },
      { type: "assistant_text", text: "It is 3", delta: " is 3" }
    ]
    expect(toStored(events[2]!)).toEqual({ type: "assistant_text", delta: " me" })
    expect(fromStored(viaJsonb(events)).map((item) => item.event)).toEqual(events)
  })

  it("replays with the live stream's bytes although jsonb reordered the keys", () => {
    const events = Object.values(samples)
    const replayed = fromStored(viaJsonb(events)).map(Sse.frame)
    expect(replayed).toEqual(events.map((event, index) => Sse.frame({ seq: index + 1, event })))
  })

  it("turns a row that does not decode into an error event at its place and goes on", () => {
    const rows = [
      { seq: 1, event: { type: "assistant_text", delta: "Hi" } as unknown },
      { seq: 2, event: { type: "rag_rerank", results: [] } },
      { seq: 3, event: { type: "tool_result", tool: "add" } },
      { seq: 4, event: null },
      { seq: 5, event: "not an object" },
      { seq: 6, event: { type: "assistant_text", delta: " there" } },
      { seq: 7, event: samples.response }
    ]
    const unreadable = (seq: number) => ({
      seq,
      event: { type: "error", message: `Event ${seq} of this run could not be read back from the run log` }
    })
    expect(fromStored(rows)).toEqual([
      { seq: 1, event: { type: "assistant_text", text: "Hi", delta: "Hi" } },
      unreadable(2),
      unreadable(3),
      unreadable(4),
      unreadable(5),
      { seq: 6, event: { type: "assistant_text", text: "Hi there", delta: " there" } },
      { seq: 7, event: samples.response }
    ])
  })
})

describe("the OpenAPI document", () => {
  const spec = OpenApi.fromApi(CairnApi)
  const routes = [
    ["/chat/stream", "post"],
    ["/api/v1/sessions/{id}/stream", "get"]
  ] as const

  it.each(routes)("documents the event union on %s", (route, method) => {
    const operation = spec.paths[route]?.[method]
    const content = operation?.responses[200]?.content as Record<string, { readonly schema: unknown }> | undefined
    const media = content?.["text/event-stream"]
    expect(media).toBeDefined()
    const events = (
      media!.schema as {
        "x-event-schema"?: {
          anyOf: Array<{ properties: { type: { enum: Array<string> } } & Record<string, unknown>; required: Array<string> }>
        }
      }
    )["x-event-schema"]
    expect(events).toBeDefined()
    // Every field, optional ones (tool_result's error) included; `type` is always required.
    expect(events!.anyOf.map((member) => [member.properties.type.enum[0], Object.keys(member.properties).filter((key) => key !== "type")]))
      .toEqual(
        schemaTable.map(([type, fields]) => [type, [...fields]])
      )
    for (const member of events!.anyOf) expect(member.required).toContain("type")
    // Inlined: a $ref here would point into the OpenAPI document, where no such definition is.
    expect(JSON.stringify(events)).not.toContain("$ref")
  })
})
