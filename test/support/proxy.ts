/**
 * A round-robin reverse proxy on 127.0.0.1, as a load balancer in front of several `cairn serve`
 * processes: each request goes to the next upstream in turn (responses streamed, SSE included),
 * and says which one answered in `x-upstream`. An upstream that refuses the connection (a killed
 * process) is skipped and the request goes to the next one, as HAProxy's `option redispatch` does.
 */
import * as http from "node:http"
import type * as net from "node:net"

export interface RoundRobinProxy {
  readonly url: string
  /** The upstream index that answers the next request. */
  readonly next: () => number
  /** Puts another upstream in the rotation (a new host joining the balancer). */
  readonly add: (upstream: string) => void
  readonly close: () => Promise<void>
}

export interface ProxyOptions {
  /**
   * Checks each upstream's `GET /health/ready` this often and leaves out those not ready, as
   * HAProxy's health checks do (a draining host leaves the rotation before it stops serving).
   */
  readonly readinessEveryMs?: number
}

export const startProxy = async (initial: ReadonlyArray<string>, options: ProxyOptions = {}): Promise<RoundRobinProxy> => {
  const upstreams = [...initial]
  const notReady = new Set<number>()
  let turn = 0
  const sockets = new Set<net.Socket>()
  const checks = options.readinessEveryMs === undefined ? undefined : setInterval(() => {
    upstreams.forEach((upstream, index) => {
      fetch(`${upstream}/health/ready`).then(
        (response) => (response.ok ? notReady.delete(index) : notReady.add(index)),
        () => notReady.add(index)
      )
    })
  }, options.readinessEveryMs)
  /** The next upstream in turn that its checks have not left out (any, when all are). */
  const nextTurn = () => {
    for (let tries = 0; tries < upstreams.length; tries++) {
      const index = turn
      turn = (turn + 1) % upstreams.length
      if (!notReady.has(index)) return index
    }
    return turn
  }
  const forward = (
    index: number,
    tries: number,
    request: http.IncomingMessage,
    body: Buffer,
    response: http.ServerResponse
  ) => {
    const target = new URL(request.url ?? "/", upstreams[index])
    const outgoing = http.request(
      target,
      // A new connection per request: a dead upstream then refuses it (and is skipped) rather than
      // failing a kept-alive socket midway, where the request may or may not have been taken.
      { method: request.method, headers: { ...request.headers, host: target.host }, agent: false },
      (upstream) => {
        response.writeHead(upstream.statusCode ?? 502, { ...upstream.headers, "x-upstream": String(index) })
        upstream.pipe(response)
        // A client that goes away ends the upstream request too (a stream's disconnect).
        response.on("close", () => upstream.destroy())
      }
    )
    outgoing.on("error", (error: NodeJS.ErrnoException) => {
      if (!response.headersSent && error.code === "ECONNREFUSED" && tries < upstreams.length) {
        forward((index + 1) % upstreams.length, tries + 1, request, body, response)
      } else if (!response.headersSent) {
        response.writeHead(502, { "content-type": "application/json" })
        response.end(JSON.stringify({ detail: `upstream ${index}: ${error.message}` }))
      } else response.destroy()
    })
    outgoing.end(body)
  }
  const server = http.createServer((request, response) => {
    const chunks: Array<Buffer> = []
    request.on("data", (chunk: Buffer) => chunks.push(chunk))
    request.on("end", () => {
      forward(nextTurn(), 1, request, Buffer.concat(chunks), response)
    })
  })
  // Idle client connections outlive the clients' own keep-alive (undici's 4 s): at Node's default
  // of 5 s a busy machine let the proxy close one just as a request went out on it ("fetch failed").
  server.keepAliveTimeout = 65_000
  server.headersTimeout = 66_000
  server.on("connection", (socket) => {
    sockets.add(socket)
    socket.on("close", () => sockets.delete(socket))
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.address() as net.AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    next: () => turn,
    add: (upstream) => void upstreams.push(upstream),
    close: () =>
      new Promise<void>((resolve) => {
        if (checks) clearInterval(checks)
        for (const socket of sockets) socket.destroy()
        server.close(() => resolve())
      })
  }
}
