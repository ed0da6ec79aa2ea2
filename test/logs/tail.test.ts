/**
 * The live log tail (`GET /api/v1/admin/logs/stream`, issue 58 item 5): a line the server writes
 * after a reader connects arrives; the level and text filters hold; a key without logs:read is
 * refused; a reconnect with Last-Event-ID (or `after`) gets the kept lines it missed and none twice;
 * the typed client reads it; secret-bearing lines stay masked; the stream ends cleanly at shutdown.
 * Then, on the tail itself: credential-like values masked, a slow reader's lost lines counted.
 */
import { FetchHttpClient } from "@effect/platform"
import { Effect, Logger, Redacted, Stream } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeStreamingClient } from "../../src/client.ts"
import { readerQueue, shown } from "../../src/logs/TailStream.ts"
import { makeTail, type TailEntry } from "../../src/telemetry/LogTail.ts"
import { createKey } from "../auth/helpers.ts"
import { backends } from "../support/database.ts"
import { startServer, type TestServer } from "../support/server.ts"
import { waitFor } from "../support/time.ts"

// Built at runtime so no credential-shaped literal sits in the repository.
const githubToken = "ghp_" + "Tq8Lm2Xv7Rt4Np1Ks9Wd3Yb6Hc5Jf0Ga8Ue3"

interface TailReader {
  readonly status: number
  readonly events: Array<any>
  readonly ids: Array<string>
  readonly ended: () => boolean
  readonly close: () => void
}

/** Opens the stream with fetch and reads its frames as they come. */
const openTail = async (server: TestServer, query = "", init: { auth?: string; headers?: Record<string, string> } = {}) => {
  const controller = new AbortController()
  const response = await server.request(`/api/v1/admin/logs/stream${query}`, { signal: controller.signal, ...init })
  const events: Array<any> = []
  const ids: Array<string> = []
  let ended = false
  if (response.ok) {
    void (async () => {
      const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader()
      let buffer = ""
      for (let read = await reader.read(); !read.done; read = await reader.read()) {
        buffer += read.value
        for (let cut = buffer.indexOf("\n\n"); cut >= 0; cut = buffer.indexOf("\n\n")) {
          const lines = buffer.slice(0, cut).split("\n")
          buffer = buffer.slice(cut + 2)
          const data = lines.filter((line) => line.startsWith("data: ")).map((line) => line.slice(6)).join("\n")
          const id = lines.find((line) => line.startsWith("id: "))
          if (id) ids.push(id.slice(4))
          if (data) events.push(JSON.parse(data))
        }
      }
      ended = true
    })().catch(() => undefined)
  }
  const tail: TailReader = { status: response.status, events, ids, ended: () => ended, close: () => controller.abort() }
  return tail
}

const setLevel = async (server: TestServer, level: string) =>
  expect((await server.request("/api/v1/admin/log-level", { method: "PUT", body: JSON.stringify({ level }) })).status).toBe(200)

const levelLine = (reader: TailReader, level: string) =>
  waitFor(() => reader.events.find((event) => event.message === `Log level set to ${level} at runtime`), `the line of level ${level}`)

describe.each(backends)("the live log tail (%s)", (backend) => {
  let server: TestServer

  beforeAll(async () => {
    server = await startServer({ backend, env: { LOG_LEVEL: "debug" } })
  })
  afterAll(async () => {
    await server?.close()
  })

  it("sends a line written after connecting, filtered by level and text", async () => {
    const all = await openTail(server)
    const infoUp = await openTail(server, "?level=info")
    const text = await openTail(server, "?q=LEVEL%20SET%20TO%20TRACE")
    expect(all.status).toBe(200)
    // A debug line (the request log), then an info one.
    await server.request("/api/v1/admin/log-level")
    await setLevel(server, "trace")
    const line = await levelLine(all, "trace")
    expect(line).toMatchObject({ type: "line", level: "info", fiber: expect.stringMatching(/^#\d+$/) })
    expect(Date.parse(line.timestamp)).not.toBeNaN()
    expect(all.events.some((event) => event.level === "debug" && event.message === "request")).toBe(true)
    await levelLine(infoUp, "trace")
    expect(infoUp.events.filter((event) => event.level === "debug" || event.level === "trace")).toEqual([])
    await levelLine(text, "trace")
    expect(text.events.map((event) => event.message)).toEqual(["Log level set to trace at runtime"])
    await setLevel(server, "debug")
    for (const reader of [all, infoUp, text]) reader.close()
  })

  it("refuses a key without logs:read, and a filter it cannot read", async () => {
    const chat = await createKey(server, ["chat"])
    expect((await openTail(server, "", { auth: chat.key })).status).toBe(403)
    const reader = await createKey(server, ["logs:read"])
    const allowed = await openTail(server, "?level=error", { auth: reader.key })
    expect(allowed.status).toBe(200)
    allowed.close()
    expect((await openTail(server, "?level=loud")).status).toBe(422)
  })

  it("replays the kept lines after Last-Event-ID or `after`, none twice", async () => {
    const first = await openTail(server, "?q=log%20level%20set")
    await setLevel(server, "info")
    await levelLine(first, "info")
    const seen = first.ids[first.ids.length - 1]!
    first.close()
    await setLevel(server, "debug")
    const again = await openTail(server, "?q=log%20level%20set", { headers: { "last-event-id": seen } })
    await levelLine(again, "debug")
    expect(again.events.map((event) => event.message)).toEqual(["Log level set to debug at runtime"])
    expect(again.ids).not.toContain(seen)
    again.close()
    // The typed client asks with `after`; an id of another process start replays every kept line.
    const client = await Effect.runPromise(
      makeStreamingClient({ baseUrl: server.baseUrl, apiKey: server.apiKey }).pipe(Effect.provide(FetchHttpClient.layer))
    )
    const replayed = await Effect.runPromise(
      client.logs({ q: "log level set", after: `zzzzzz-${seen.split("-")[1]}` }).pipe(
        Stream.takeUntil((event) => event.type === "line" && event.message === "Log level set to info at runtime"),
        Stream.runCollect,
        Effect.map((chunk) => [...chunk])
      )
    )
    expect(replayed.every((event) => event.type === "line" && event.message.startsWith("Log level set to"))).toBe(true)
  })

  it("keeps a request's query string out of its line", async () => {
    const reader = await openTail(server, "?q=%2Fapi%2Fv1%2Fhealth")
    await server.request(`/api/v1/health?token=${githubToken}`)
    await waitFor(() => reader.events.find((event) => event.annotations.url === "/api/v1/health"), "the request line")
    expect(JSON.stringify(reader.events)).not.toContain(githubToken)
    reader.close()
  })

  it("ends cleanly when the server stops", async () => {
    const reader = await openTail(server)
    await setLevel(server, "debug")
    await levelLine(reader, "debug")
    await server.close()
    server = undefined as unknown as TestServer
    await waitFor(() => (reader.ended() ? true : undefined), "the stream's end")
  })
})

describe("the tail itself", () => {
  const logged = (effect: Effect.Effect<void>) => {
    const { tail, push } = makeTail()
    Effect.runSync(effect.pipe(Effect.provide(Logger.replace(Logger.defaultLogger, Logger.make(push)))))
    return tail.replay({ since: new Date(0) }).entries
  }

  it("masks credential-named annotations, secret-like text and Redacted values", () => {
    const [entry] = logged(
      Effect.logWarning(`deploy with ${githubToken}`).pipe(
        Effect.annotateLogs({ api_key: "hunter2", password: Redacted.make("swordfish"), note: `token ${githubToken}`, user: "ada" })
      )
    )
    const { line, text } = shown(entry!)
    expect(line).toMatchObject({ level: "warning", annotations: { api_key: "****", password: "****", user: "ada" } })
    expect(JSON.stringify(line)).not.toMatch(/hunter2|swordfish|ghp_Tq8/)
    expect(text).not.toContain("ghp_")
  })

  it("keeps a line whose annotation is undefined, and never fails the code that logged", () => {
    // The request log at debug annotates such values; rendering one threw, and every such request answered 500.
    const [entry] = logged(Effect.logInfo("request").pipe(Effect.annotateLogs({ body: undefined, status: 502 })))
    expect(shown(entry!).line).toMatchObject({ message: "request", annotations: { body: null, status: 502 } })
  })

  it("counts the lines a slow reader lost, where it lost them, and keeps at most 500 waiting", async () => {
    const entries: Array<TailEntry> = [
      ...logged(Effect.forEach(Array.from({ length: 700 }, (_, i) => i), (i) => Effect.logInfo(`line ${i}`)))
    ]
    // The ring keeps the last 500.
    expect(entries.length).toBe(500)
    const written: Array<string> = []
    let open = true
    const queue = readerQueue((text) => {
      written.push(text)
      return open
    }, () => undefined)
    const turn = () => new Promise((resolve) => setImmediate(resolve))
    open = false
    for (const entry of entries.slice(0, 10)) queue.add({ entry })
    await turn()
    // The socket is full: 500 more wait, 100 are counted.
    for (const entry of [...entries, ...entries.slice(0, 100)]) queue.add({ entry })
    await turn()
    expect(written.length).toBe(1)
    open = true
    queue.resume()
    await turn()
    const frames = written.join("").split("\n\n").filter(Boolean)
    expect(frames.length).toBe(511)
    expect(frames[510]).toContain(`"type":"skipped","count":100,"reason":"slow_reader"`)
    expect(frames[509]).toContain(entries[499]!.raw.id)
  })
})
