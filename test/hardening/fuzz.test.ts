/**
 * test/hardening — a schema-driven fuzz test of the whole HTTP surface.
 *
 * It starts a real server (the bundled integrations loaded, so their routes are in the document),
 * reads `/openapi.json`, and for every operation sends cases derived from the operation's own
 * schemas (`$ref`s resolved into `components`, a seeded generator, at most BOUND cases each), with
 * the static admin key so the handlers run, and some without any credential. It grows with the API
 * by construction: a new route is fuzzed the day it is added.
 *
 * The classes of bad input (cases.ts):
 * - whole body: deeply nested JSON (arrays 100,000 deep, objects 20,000 deep); a raw NUL byte in
 *   the JSON text (invalid JSON); a `\u0000` escape in a key and value; a lone UTF-16 surrogate
 *   (`\ud800` escape); `text/plain`, form-urlencoded and multipart-without-boundary bodies (a 2xx is
 *   a failure for these on a JSON route: a wrong content type is 415 or 422, never a silent 200);
 *   an empty body, no body, `null`, `[]`, a string, invalid JSON, and an array of 100,000 items;
 * - per body field, by its schema: over-long strings (10,000 characters: names, ids, slugs meet
 *   indexed columns), `\u0000` and lone surrogates inside strings, wrong types (a string where a
 *   number is, an object where a string is, arrays where objects are, null), negative, fractional,
 *   huge (1e308) and beyond-int32/int64 numbers, unknown enum values, huge arrays (100,000 invalid
 *   items), a missing required field, an unknown field; a route with no body schema (an
 *   integration's) gets common field names (title, content, id, …) as over-long text and as wrong
 *   types, so what its handler passes on meets the same classes;
 * - per query parameter: `%00`, a percent-encoded lone surrogate, 10,000 characters, wrong types,
 *   out-of-range numbers, an unknown enum value, a bad date, an empty and a repeated parameter;
 * - per path parameter: not a UUID, 10,000 characters, `%00` (alone and after a real id), an
 *   encoded lone surrogate, a traversal, an unknown and an upper-case UUID, numbers.
 * Path parameters naming a resource the test made (a bot, a channel, a session, …) carry its real
 * id in every other case, so the handlers get past their 404.
 *
 * For every response: the status is below 500, and an error (>= 400) is JSON whose `detail` is a
 * string or, for a 422, a list of at most 50 `{loc, msg, type}` in a small body (the OpenAI
 * surface `/v1` answers its own `{error: {message}}` shape, MCP's `/mcp` JSON-RPC's). A failure
 * prints one compact table: method, path, case class, target, status, body excerpt. An error body
 * over 64 KB is a failure too (a 422 that echoes 100,000 items is not small).
 *
 * Not sent: the restart (SKIPPED, it would end the server under test). Streams (a chat, a rejoin,
 * MCP's GET, a download) are judged by their status and not read; every request has a 10 s limit.
 * The time limit of the test is generous on purpose: a run cut short would close the server under
 * the requests still in flight, and every later case would fail as a reset connection.
 */
import * as http from "node:http"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type FakeLlm, fakeLlmEnv, startFakeLlm } from "../fixtures/fakeLlm.ts"
import { backends } from "../support/database.ts"
import { json, startServer, type TestServer } from "../support/server.ts"
import { type Case, casesFor, type Known, urlOf } from "./cases.ts"
import { type OpenApiDocument, type Operation, operations } from "./openapi.ts"

const SEED = 26_09
/** Cases per operation (the fixed whole-body and path cases first, then a seeded pick of the rest). */
const BOUND = 40
const CONCURRENCY = 4
const TIMEOUT_MS = 10_000
/** At most this many bytes in an error body (a 422 listing 50 problems fits easily). */
const MAX_ERROR_BYTES = 64 * 1024

/** Operations the test cannot send without ending itself, each with its reason. */
const SKIPPED: Record<string, string> = {
  "POST /api/v1/admin/operations/restart": "asks the server under test to exit for its supervisor"
}

/**
 * FUZZ_PATHS (a regular expression over the path templates) narrows a local run to some operations,
 * to check a fix quickly; unset, as in the suite, every operation is sent.
 */
const narrowed = (op: Operation) => !process.env.FUZZ_PATHS || new RegExp(process.env.FUZZ_PATHS).test(op.path)

/** Operations that change what the others stand on (delete the test's resources): sent last. */
const isLast = (op: Operation) => op.method === "DELETE"

interface Outcome {
  readonly op: Operation
  readonly c: Case
  readonly status: number
  readonly excerpt: string
  readonly problem: string | undefined
  readonly ms: number
}

const excerpt = (text: string) => text.replace(/\s+/g, " ").slice(0, 140)

/** What is wrong with an error body, if anything. */
const shapeProblem = (op: Operation, status: number, text: string): string | undefined => {
  let body: any
  try {
    body = JSON.parse(text)
  } catch {
    return "error body is not JSON"
  }
  if (op.path.startsWith("/v1/")) return typeof body?.error?.message === "string" ? undefined : "not OpenAI's error shape"
  if (op.path === "/mcp" && body?.jsonrpc === "2.0") return typeof body?.error?.message === "string" ? undefined : "not a JSON-RPC error"
  if (typeof body?.detail === "string") return undefined
  if (status !== 422) return "detail is not a string"
  if (!Array.isArray(body?.detail)) return "422 detail is neither a string nor a list"
  if (body.detail.length > 50) return `422 lists ${body.detail.length} problems (more than 50)`
  const bad = body.detail.find(
    (item: any) => !Array.isArray(item?.loc) || typeof item?.msg !== "string" || typeof item?.type !== "string"
  )
  return bad === undefined ? undefined : `422 item is not {loc, msg, type}: ${JSON.stringify(bad).slice(0, 80)}`
}

/**
 * One request on its own connection (node:http, no agent): a server that closes a connection after
 * refusing a body cannot fail the next case on a reused socket, so a reset here is the case's own.
 */
const rawRequest = (
  baseUrl: string,
  path: string,
  options: { method: string; headers: Record<string, string>; body: Buffer | undefined }
) =>
  new Promise<{ status: number; type: string; text: string; bytes: number }>((resolve, reject) => {
    const url = new URL(baseUrl)
    const request = http.request(
      { host: url.hostname, port: url.port, path, method: options.method, headers: options.headers, agent: false },
      (response) => {
        const type = String(response.headers["content-type"] ?? "")
        const status = response.statusCode ?? 0
        // A stream (a chat, a rejoin, MCP's GET, a download) is not waited on: its status is what is asserted.
        if (status < 400 && /event-stream|octet-stream|gzip/.test(type)) {
          response.destroy()
          return resolve({ status, type, text: "", bytes: 0 })
        }
        const chunks: Array<Buffer> = []
        let bytes = 0
        response.on("data", (chunk: Buffer) => {
          bytes += chunk.length
          if (bytes <= 2 * MAX_ERROR_BYTES) chunks.push(chunk)
        })
        response.on("end", () => resolve({ status, type, text: Buffer.concat(chunks).toString("utf8"), bytes }))
        response.on("error", reject)
      }
    )
    request.setTimeout(TIMEOUT_MS, () => request.destroy(new Error(`no answer in ${TIMEOUT_MS} ms`)))
    request.on("error", reject)
    request.end(options.body)
  })

const send = async (server: TestServer, op: Operation, c: Case): Promise<Outcome> => {
  const started = Date.now()
  const outcome = (status: number, text: string, problem: string | undefined): Outcome => ({
    op,
    c,
    status,
    excerpt: excerpt(text),
    problem,
    ms: Date.now() - started
  })
  const headers: Record<string, string> = {}
  if (!c.anonymous) headers.authorization = `Bearer ${server.apiKey}`
  if (c.contentType !== undefined) headers["content-type"] = c.contentType
  const body = c.body !== undefined && !["GET", "DELETE"].includes(op.method) ? Buffer.from(c.body) : undefined
  if (body !== undefined) headers["content-length"] = String(body.length)
  try {
    const response = await rawRequest(server.baseUrl, urlOf(op, c), { method: op.method, headers, body })
    if (response.status >= 500) return outcome(response.status, response.text, "5xx")
    if (response.status < 400) return outcome(response.status, "", c.mustRefuse ? "a wrong content type was accepted" : undefined)
    const problem = response.bytes > MAX_ERROR_BYTES
      ? `error body is ${response.bytes} bytes`
      : shapeProblem(op, response.status, response.text)
    return outcome(response.status, response.text, problem)
  } catch (error) {
    return outcome(0, String(error), String(error).includes("no answer") ? `no answer in ${TIMEOUT_MS} ms` : "connection failed")
  }
}

/** Runs `jobs` with at most `limit` at once, in order of start. */
const pool = async <A>(jobs: ReadonlyArray<() => Promise<A>>, limit: number): Promise<Array<A>> => {
  const results: Array<A> = new Array(jobs.length)
  let next = 0
  await Promise.all(
    Array.from({ length: limit }, async () => {
      while (next < jobs.length) {
        const i = next++
        results[i] = await jobs[i]!()
      }
    })
  )
  return results
}

const table = (failures: ReadonlyArray<Outcome>) =>
  failures
    .map((f) =>
      [
        f.op.method.padEnd(6),
        f.op.path.padEnd(58),
        f.c.kind.padEnd(24),
        f.c.target.slice(0, 28).padEnd(28),
        String(f.status).padEnd(4),
        f.problem,
        "|",
        f.excerpt
      ].join(" ")
    )
    .join("\n")

describe.each(backends)("the schema-driven fuzz test (%s)", (backend) => {
  let llm: FakeLlm
  let server: TestServer
  let known: Known

  const create = async (path: string, body: unknown): Promise<any> => {
    const response = await server.request(path, { method: "POST", body: JSON.stringify(body) })
    if (response.status >= 300) throw new Error(`setup: POST ${path} answered ${response.status}: ${await response.text()}`)
    return json(response)
  }

  beforeAll(async () => {
    llm = await startFakeLlm()
    // An answer every caller takes: a chat's text, and the title and summary a summarize or compaction asks for.
    llm.setDefaultReply({ text: "{\"title\": \"Fuzz\", \"summary\": \"ok\"}" })
    server = await startServer({ backend, env: { ...fakeLlmEnv(llm), LLM_MAX_RETRIES: "0" } })
    // The resources whose ids the path parameters carry, so the handlers get past their 404.
    const bot = await create("/api/v1/admin/bots", { id: "fuzzbot", name: "Fuzz" })
    const channel = await create("/api/v1/admin/channels", { name: "fuzz", bot_id: bot.id, workspace_enabled: true })
    const session = await create("/api/v1/sessions", { bot_id: bot.id, client_id: "fuzz" })
    const todo = await create("/api/v1/todos", { title: "fuzz", bot_id: bot.id })
    const carapace = await create("/api/v1/carapaces", { id: "fuzzcarapace", name: "Fuzz" })
    const key = await create("/api/v1/admin/api-keys", { name: "fuzz", scopes: ["chat"] })
    // The first ingest also sets the document store up (on PGlite, seconds): done here, not in a case's 10 s.
    const document = await create("/api/v1/documents", { title: "fuzz", content: "a fuzz document", integration_id: "example" })
    const ids: Array<[RegExp, string]> = [
      [/^\/api\/v1\/admin\/bots\/\{id\}/, bot.id],
      [/\/channels\/\{id\}/, channel.id],
      [/\/sessions\/\{id\}/, session.session_id],
      [/\/todos\/\{id\}/, todo.id],
      [/\/carapaces\/\{id\}/, carapace.id],
      [/\/api-keys\/\{id\}/, key.id],
      [/\/documents\/\{id\}/, document.id],
      [/\/admin\/integrations\/\{id\}/, "mailbox"],
      [/\/v1\/models\/\{model\}/, bot.id],
      [/\/tools\/\{name\}/, "client_action"]
    ]
    for (const [re, id] of ids) if (typeof id !== "string" || id.length === 0) throw new Error(`setup: no id for ${re}`)
    known = {
      pathId: (path, name) => (name === "*" ? "notes.md" : ids.find(([re]) => re.test(path) && path.includes(`{${name}}`))?.[1]),
      field: { bot_id: bot.id, channel_id: channel.id, session_id: session.session_id, level: "warning" }
    }
  })
  afterAll(async () => {
    await server?.close()
    await llm?.close()
  })

  it("answers every operation's bad input below 500, in the error shape", { timeout: 900_000 }, async () => {
    const doc = (await json(await server.request("/openapi.json"))) as OpenApiDocument
    const all = operations(doc)
    // The document holds the integrations' routes too (the bundled ones are loaded).
    expect(all.some((op) => op.path.startsWith("/integrations/"))).toBe(true)
    const fuzzed = all.filter((op) => !(`${op.method} ${op.path}` in SKIPPED))
    expect(all.length - fuzzed.length).toBe(Object.keys(SKIPPED).length)

    const started = Date.now()
    const jobsOf = (ops: ReadonlyArray<Operation>) =>
      ops.filter(narrowed).flatMap((op) => casesFor(op, known, SEED, BOUND).map((c) => () => send(server, op, c)))
    const outcomes = [
      ...(await pool(jobsOf(fuzzed.filter((op) => !isLast(op))), CONCURRENCY)),
      ...(await pool(jobsOf(fuzzed.filter(isLast)), CONCURRENCY))
    ]
    const failures = outcomes.filter((o) => o.problem !== undefined)
    console.log(
      `fuzz (${backend}): ${fuzzed.length} operations, ${outcomes.length} requests, ${failures.length} failures in ${
        Date.now() - started
      } ms`
    )
    const byKind = new Map<string, number>()
    for (const o of outcomes) byKind.set(o.c.kind, (byKind.get(o.c.kind) ?? 0) + o.ms)
    const slowest = [...byKind].sort((a, b) => b[1] - a[1]).slice(0, 6).map(([k, ms]) => `${k} ${ms} ms`).join(", ")
    console.log(`fuzz (${backend}): the slowest classes (summed over requests): ${slowest}`)
    if (failures.length > 0) console.log(`fuzz failures (${backend}):\n${table(failures)}`)
    expect(failures.map((f) => `${f.op.method} ${f.op.path} ${f.c.kind} ${f.c.target} ${f.status}`)).toEqual([])
  })
})
