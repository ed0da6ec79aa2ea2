/**
 * The provider client (the `openai` SDK as Cairn configures it, and the streamed chat over node:http), against loopback servers that
 * answer exactly as scripted here: event-stream framing, error bodies, headers, timeouts,
 * cancellation, multipart and the one resend on a keep-alive socket the server had closed.
 */
import { Effect, Either, Exit, Fiber } from "effect"
import * as http from "node:http"
import * as net from "node:net"
import { afterEach, describe, expect, it } from "vitest"
import { type Connection, OpenAiClient, providerMessage, WireError } from "../../src/providers/OpenAiClient.ts"
import { eventually, scaled, within } from "../support/time.ts"

type Handler = (req: http.IncomingMessage, res: http.ServerResponse, body: Buffer) => void

const servers: Array<{ close: () => void }> = []
afterEach(() => {
  for (const server of servers.splice(0)) server.close()
})

/** Connections a server made by `serve` took, and how many of them have closed since. */
const connectionsOf = new Map<string, { opened: number; closed: number }>()

const serve = async (handler: Handler): Promise<string> => {
  const server = http.createServer((req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => handler(req, res, Buffer.concat(chunks)))
  })
  const connections = { opened: 0, closed: 0 }
  server.on("connection", (socket: net.Socket) => {
    connections.opened++
    socket.on("close", () => connections.closed++)
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  servers.push({ close: () => server.close() && server.closeAllConnections() })
  const base = `http://127.0.0.1:${(server.address() as net.AddressInfo).port}/v1`
  connectionsOf.set(base, connections)
  return base
}

/** Resolves once every connection the client opened to `base` (one at least) has closed. */
const allClosed = (base: string) =>
  eventually(() => {
    const { opened, closed } = connectionsOf.get(base)!
    return opened > 0 && closed === opened
  }, `the connections to ${base} to close`)

/** A client whose timeout a provider that answers meets even on a busy machine; tests of the timeout set their own. */
const client = (baseUrl: string, extra: Partial<Connection> = {}) =>
  new OpenAiClient({ baseUrl, apiKey: "sk-test-key", headers: {}, timeoutMs: scaled(10_000), ...extra })

/** All payloads of a stream, or the WireError that ended it. */
const drain = (c: OpenAiClient) =>
  Effect.runPromise(
    Effect.scoped(
      Effect.gen(function*() {
        const events = yield* c.chatStream({ model: "m", messages: [] })
        const out: Array<unknown> = []
        return yield* Effect.async<Array<unknown>, WireError>((resume) =>
          events.read({
            chunks: (batch) => void out.push(...batch),
            end: () => resume(Effect.succeed(out)),
            fail: (error) => resume(Effect.fail(error))
          })
        )
      })
    ).pipe(Effect.either)
  )

/** Writes the pieces with a pause between them, so they reach the client as separate reads. */
const writeSlowly = (res: http.ServerResponse, pieces: ReadonlyArray<string>) => {
  res.writeHead(200, { "content-type": "text/event-stream" })
  let i = 0
  const next = () => {
    if (i === pieces.length) return res.end()
    res.write(pieces[i++])
    setTimeout(next, 5)
  }
  next()
}

describe("OpenAiClient", () => {
  it("sends JSON to the base path with the bearer key and answers the parsed reply", async () => {
    let seen: { url?: string; auth?: string; type?: string; body?: unknown } = {}
    const base = await serve((req, res, body) => {
      seen = { url: req.url!, auth: req.headers.authorization!, type: req.headers["content-type"]!, body: JSON.parse(body.toString()) }
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ ok: true }))
    })
    const reply = await Effect.runPromise(client(`${base}/`).chat({ model: "m" }))
    expect(reply).toEqual({ ok: true })
    expect(seen).toEqual({ url: "/v1/chat/completions", auth: "Bearer sk-test-key", type: "application/json", body: { model: "m" } })
    // A query on the base URL (Azure's api-version) stays on every request.
    await Effect.runPromise(client(`${base}?api-version=2024-10-21`).chat({}))
    expect(seen.url).toBe("/v1/chat/completions?api-version=2024-10-21")
  })

  it("lets a provider's own header replace the bearer key, and sends none without a key", async () => {
    const auth: Array<Record<string, unknown>> = []
    const base = await serve((req, res) => {
      auth.push({ authorization: req.headers.authorization, "api-key": req.headers["api-key"] })
      res.end("{}")
    })
    await Effect.runPromise(client(base, { headers: { "Api-Key": "azure-key", Authorization: "Token t" } }).models(2_000))
    await Effect.runPromise(client(base, { apiKey: undefined }).models(2_000))
    expect(auth).toEqual([
      { authorization: "Token t", "api-key": "azure-key" },
      { authorization: undefined, "api-key": undefined }
    ])
  })

  it("describes a non-2xx answer with its status, headers and the provider's message", async () => {
    const base = await serve((_req, res) => {
      res.writeHead(429, { "retry-after": "3", "content-type": "application/json" })
      res.end(JSON.stringify({ error: { message: "Slow down", type: "rate_limit_error" } }))
    })
    const result = await Effect.runPromise(Effect.either(client(base).chat({})))
    expect(Either.isLeft(result)).toBe(true)
    const error = (result as Either.Left<WireError, unknown>).left
    expect(error).toMatchObject({ reason: "status", status: 429, message: "Slow down" })
    expect(error.headers?.["retry-after"]).toBe("3")
  })

  it("reads the provider's message from the usual error shapes", () => {
    expect(providerMessage(400, JSON.stringify({ error: { message: "bad model" } }))).toBe("bad model")
    expect(providerMessage(400, JSON.stringify({ error: "plain words" }))).toBe("plain words")
    expect(providerMessage(400, JSON.stringify({ message: "top level" }))).toBe("top level")
    expect(providerMessage(400, JSON.stringify({ error: { code: 7 } }))).toBe("{\"code\":7}")
    expect(providerMessage(502, "<html>Bad gateway</html>")).toBe("<html>Bad gateway</html>")
    expect(providerMessage(503, "")).toBe("503 status code (no body)")
    expect(providerMessage(500, "x".repeat(5000))).toHaveLength(1001)
  })

  it("fails a 200 whose body is not JSON as malformed", async () => {
    const base = await serve((_req, res) => res.end("not json"))
    const result = await Effect.runPromise(Effect.either(client(base).chat({})))
    expect(result).toMatchObject({ left: { reason: "malformed" } })
  })

  it("times out a provider that never answers, and a body that stops halfway", async () => {
    const silent = await serve(() => undefined)
    // The provider never answers: only the client's own timer can end the call, and it says so.
    const result = await Effect.runPromise(Effect.either(client(silent, { timeoutMs: 200 }).chat({})))
    expect(result).toMatchObject({ left: { reason: "timeout" } })
    await allClosed(silent)

    const halfway = await serve((_req, res) => {
      res.writeHead(200, { "content-type": "application/json", "content-length": "100" })
      res.write("{\"choices\": [")
    })
    const partial = await Effect.runPromise(Effect.either(client(halfway, { timeoutMs: 200 }).chat({})))
    expect(partial).toMatchObject({ left: { reason: "timeout" } })
  })

  it("reports a refused connection as unreachable", async () => {
    const port = await new Promise<number>((resolve) => {
      const probe = net.createServer().listen(0, "127.0.0.1", () => {
        const { port } = probe.address() as net.AddressInfo
        probe.close(() => resolve(port))
      })
    })
    const result = await Effect.runPromise(Effect.either(client(`http://127.0.0.1:${port}/v1`).chat({})))
    expect(result).toMatchObject({ left: { reason: "unreachable", message: expect.stringContaining("ECONNREFUSED") } })
  })

  it("ends the request when the caller is interrupted", async () => {
    // Interrupted once the provider holds the whole request (not after a pause that a busy machine
    // may not have given the request to arrive in), with a timeout the test outlasts.
    let arrived!: () => void
    const holding = new Promise<void>((resolve) => (arrived = resolve))
    let closed!: () => void
    const sawClose = new Promise<void>((resolve) => (closed = resolve))
    const base = await serve((req) => {
      req.socket.on("close", () => closed())
      arrived()
    })
    const fiber = Effect.runFork(client(base, { timeoutMs: 600_000 }).chat({}))
    await within(holding, "the request to reach the provider")
    const exit = await Effect.runPromise(Fiber.interrupt(fiber))
    expect(Exit.isInterrupted(exit)).toBe(true)
    await within(sawClose, "the interrupted request's connection to close")
  })

  /**
   * A raw server that answers the first request on each connection whole, with keep-alive, and
   * meets the next one on that connection with `second`; `requests()` counts requests arrived and
   * `reuses()` the requests that met `second`. The pool decides which connection a call takes, so
   * a test calls until one reuse has happened.
   */
  const rawServer = async (second: (socket: net.Socket) => void) => {
    let requests = 0
    let reuses = 0
    const server = net.createServer((socket) => {
      let served = 0
      socket.on("data", (data: Buffer) => {
        const arrived = data.toString("latin1").split("POST /").length - 1
        if (arrived === 0) return // the rest of a request already counted
        requests += arrived
        if (served++ === 0) {
          socket.write(
            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 13\r\nconnection: keep-alive\r\n\r\n{\"n\":\"first\"}"
          )
        } else {
          reuses++
          second(socket)
        }
      })
    })
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    servers.push({ close: () => server.close() })
    return {
      client: client(`http://127.0.0.1:${(server.address() as net.AddressInfo).port}/v1`),
      requests: () => requests,
      reuses: () => reuses
    }
  }

  it("resends once when a kept-alive socket turns out closed by the provider", async () => {
    // The reuse is met with a reset, as when the server's idle timeout races it.
    const raw = await rawServer((socket) => socket.resetAndDestroy())
    let calls = 0
    while (raw.reuses() === 0 && calls < 10) {
      expect(await Effect.runPromise(raw.client.chat({}))).toEqual({ n: "first" })
      calls++
    }
    expect(raw.reuses()).toBe(1)
    // Every call answered; the one that met the reset was sent once more, on a fresh connection.
    expect(raw.requests()).toBe(calls + 1)
  })

  it("never sends a request again once the provider has started answering it", async () => {
    // A reused connection gets the start of an answer, then a reset.
    const raw = await rawServer((socket) => {
      socket.write("HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{\"n\":")
      setTimeout(() => socket.resetAndDestroy(), 20)
    })
    let calls = 0
    let broken: Either.Either<object, WireError> | undefined
    while (raw.reuses() === 0 && calls < 10) {
      broken = await Effect.runPromise(Effect.either(raw.client.chat({})))
      calls++
    }
    expect(raw.reuses()).toBe(1)
    expect(broken).toMatchObject({ left: { reason: "unreachable" } })
    await new Promise((resolve) => setTimeout(resolve, 50))
    expect(raw.requests()).toBe(calls)
  })

  it("sends multipart fields and a file a standard parser reads back", async () => {
    let form: FormData | undefined
    const base = await serve(async (req, res, body) => {
      form = await new Request("http://x/", { method: "POST", headers: { "content-type": req.headers["content-type"]! }, body }).formData()
      res.end(JSON.stringify({ text: "ok" }))
    })
    const audio = new Uint8Array([0, 1, 2, 250, 13, 10])
    await Effect.runPromise(client(base).transcribe("whisper-1", audio, "voice \"1\".webm", "audio/webm"))
    expect(form!.get("model")).toBe("whisper-1")
    const file = form!.get("file") as File
    expect(file.type).toBe("audio/webm")
    expect(new Uint8Array(await file.arrayBuffer())).toEqual(audio)
  })
})

describe("OpenAiClient event streams", () => {
  it("sends the streamed chat as the SDK sends its calls: the path, the base's query, the key or a provider's own headers", async () => {
    const seen: Array<Record<string, unknown>> = []
    const base = await serve((req, res, body) => {
      seen.push({
        url: req.url,
        authorization: req.headers.authorization,
        "api-key": req.headers["api-key"],
        type: req.headers["content-type"],
        body: JSON.parse(body.toString())
      })
      expect(req.headers["user-agent"]).toMatch(/^Cairn\/\d/)
      writeSlowly(res, ["data: [DONE]\n\n"])
    })
    await drain(client(`${base}?api-version=2024-10-21`))
    await drain(client(base, { headers: { "Api-Key": "azure-key", Authorization: "Token t" } }))
    await drain(client(base, { apiKey: undefined }))
    const withCredentials = new URL(base)
    withCredentials.username = "user"
    withCredentials.password = "p@ss"
    await drain(client(withCredentials.toString()))
    const body = { model: "m", messages: [], stream: true }
    expect(seen).toEqual([
      {
        url: "/v1/chat/completions?api-version=2024-10-21",
        authorization: "Bearer sk-test-key",
        "api-key": undefined,
        type: "application/json",
        body
      },
      { url: "/v1/chat/completions", authorization: "Token t", "api-key": "azure-key", type: "application/json", body },
      { url: "/v1/chat/completions", authorization: undefined, "api-key": undefined, type: "application/json", body },
      {
        url: "/v1/chat/completions",
        authorization: `Basic ${Buffer.from("user:p@ss").toString("base64")}`,
        "api-key": undefined,
        type: "application/json",
        body
      }
    ])
  })

  it("hears every read, a keep-alive comment too, so a caller's idle timer sees a provider still sending", async () => {
    // Each piece is written once the client has heard the one before: a busy machine would
    // otherwise deliver two in one read.
    let heard = () => {}
    const base = await serve(async (_req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" })
      for (const piece of [": waiting\n\n", ": waiting\n\n", "data: {\"n\":1}\n\n"]) {
        const read = new Promise<void>((resolve) => (heard = resolve))
        res.write(piece)
        await read
      }
      res.end()
    })
    const reads = await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function*() {
          const events = yield* client(base).chatStream({ model: "m", messages: [] })
          const batches: Array<ReadonlyArray<unknown>> = []
          return yield* Effect.async<Array<ReadonlyArray<unknown>>>((resume) =>
            events.read({
              chunks: (batch) => {
                batches.push(batch)
                heard()
              },
              end: () => resume(Effect.succeed(batches)),
              fail: () => resume(Effect.succeed([]))
            })
          )
        })
      )
    )
    expect(reads).toEqual([[], [], [{ n: 1 }]])
  })

  it("frames events split across reads, with CRLF, comments and multi-line data, until [DONE]", async () => {
    const base = await serve((_req, res) =>
      writeSlowly(res, [
        ": keep-alive comment\r\n\r\ndata: {\"n\"",
        ":1}\r\n\r\ndata: {\"n\":\n",
        "data: 2}\n\nevent: message\ndata: {\"n\":3}\n",
        "\ndata: [DONE]\n\ndata: {\"n\":4}\n\n"
      ])
    )
    expect(await drain(client(base))).toEqual(Either.right([{ n: 1 }, { n: 2 }, { n: 3 }]))
  })

  it("ends at the end of the body when no [DONE] comes, keeping a last unterminated event", async () => {
    const base = await serve((_req, res) => writeSlowly(res, ["data: {\"n\":1}\n\n", "data: {\"n\":2}"]))
    expect(await drain(client(base))).toEqual(Either.right([{ n: 1 }, { n: 2 }]))
  })

  it("fails on an error payload or an error event with the provider's message", async () => {
    const payload = await serve((_req, res) =>
      writeSlowly(res, ["data: {\"n\":1}\n\n", "data: {\"error\":{\"message\":\"model overloaded\"}}\n\n"])
    )
    expect(await drain(client(payload))).toMatchObject({ left: { reason: "stream_error", message: "model overloaded" } })
    const event = await serve((_req, res) => writeSlowly(res, ["event: error\ndata: {\"message\":\"quota gone\"}\n\n"]))
    expect(await drain(client(event))).toMatchObject({ left: { reason: "stream_error", message: "quota gone" } })
  })

  it("fails a payload that is not JSON as malformed, and a non-2xx opening with its status", async () => {
    const garbage = await serve((_req, res) => writeSlowly(res, ["data: {oops\n\n"]))
    expect(await drain(client(garbage))).toMatchObject({ left: { reason: "malformed" } })
    const refused = await serve((_req, res) => res.writeHead(503).end(JSON.stringify({ error: { message: "busy" } })))
    expect(await drain(client(refused))).toMatchObject({ left: { reason: "status", status: 503, message: "busy" } })
  })

  it("splits lines on a bare CR as well", async () => {
    const base = await serve((_req, res) => writeSlowly(res, ["data: {\"n\":1}\r\rdata: {\"n\":2}\r", "\rdata: [DONE]\r\r"]))
    expect(await drain(client(base))).toEqual(Either.right([{ n: 1 }, { n: 2 }]))
  })

  it("fails a 2xx that is not an event stream, with the provider's message when it carries one", async () => {
    const json = await serve((_req, res) => res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ choices: [] })))
    expect(await drain(client(json))).toMatchObject({ left: { reason: "malformed", message: expect.stringContaining("application/json") } })
    const error = await serve((_req, res) =>
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ error: { message: "no streaming here" } }))
    )
    expect(await drain(client(error))).toMatchObject({ left: { reason: "stream_error", message: "no streaming here" } })
  })

  it("reports a connection lost mid-stream as unreachable (worth a retry), not as malformed", async () => {
    const base = await serve((_req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" })
      res.write("data: {\"n\":1}\n\n")
      setTimeout(() => res.socket?.resetAndDestroy(), 20)
    })
    expect(await drain(client(base))).toMatchObject({ left: { reason: "unreachable" } })
  })

  it("keeps the connection of a finished stream for the next call", async () => {
    let connections = 0
    const base = await serve((_req, res) => writeSlowly(res, ["data: {\"n\":1}\n\n", "data: [DONE]\n\n"]))
    const port = Number(new URL(base).port)
    // Count the connections the client opens to this server.
    const probe = await new Promise<net.Server>((resolve) => {
      const proxy = net.createServer((socket) => {
        connections++
        const upstream = net.connect(port, "127.0.0.1")
        socket.pipe(upstream).pipe(socket)
        socket.on("error", () => upstream.destroy())
        upstream.on("error", () => socket.destroy())
      })
      proxy.listen(0, "127.0.0.1", () => resolve(proxy))
    })
    servers.push({ close: () => probe.close() })
    const c = client(`http://127.0.0.1:${(probe.address() as net.AddressInfo).port}/v1`)
    for (let i = 0; i < 4; i++) {
      expect(await drain(c)).toEqual(Either.right([{ n: 1 }]))
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
    expect(connections).toBe(1)
  })

  it("times out a stream's opening when the provider never answers, and drops the request", async () => {
    const silent = await serve(() => undefined)
    const result = await drain(client(silent, { timeoutMs: 200 }))
    expect(result).toMatchObject({ left: { reason: "timeout", message: "The provider did not answer in time" } })
    // The timed-out request was aborted: its connection goes, rather than waiting on the provider.
    // (Counted by the server's connections: on a busy machine the timer may fire before the request is whole.)
    await allClosed(silent)
  })

  it("times out only the opening: a slow stream that has started is not cut by the request timer", async () => {
    // The timer is long enough for a busy machine to open the stream in; the stream then outlasts it twice over.
    const timeoutMs = scaled(500)
    const base = await serve((_req, res) => {
      res.writeHead(200, { "content-type": "text/event-stream" })
      res.write("data: {\"n\":1}\n\n")
      setTimeout(() => res.end("data: {\"n\":2}\n\n"), 2 * timeoutMs)
    })
    expect(await drain(client(base, { timeoutMs }))).toEqual(Either.right([{ n: 1 }, { n: 2 }]))
  })
})
