/**
 * The cheapest proxy Node can be, for bench/llmProxy.ts: it forwards each request body to the
 * upstream URL over keep-alive sockets and sends the answer back, with no auth, no validation and no
 * records. Whatever it loses against direct calls is the price of a proxy hop on this machine,
 * which no proxy can undercut; Cairn is measured against both.
 *
 *   BARE_PROXY_PORT=... BARE_PROXY_UPSTREAM=http://127.0.0.1:9100/v1/chat/completions BARE_PROXY_KEY=... tsx bench/bareProxy.ts
 */
import * as http from "node:http"

const upstream = new URL(process.env.BARE_PROXY_UPSTREAM!)
const key = process.env.BARE_PROXY_KEY ?? ""
const agent = new http.Agent({ keepAlive: true, maxSockets: 256 })

const server = http.createServer((req, res) => {
  const chunks: Array<Buffer> = []
  req.on("data", (chunk: Buffer) => chunks.push(chunk))
  req.on("end", () => {
    const body = Buffer.concat(chunks)
    const forward = http.request(
      {
        hostname: upstream.hostname,
        port: upstream.port,
        path: upstream.pathname,
        method: "POST",
        agent,
        headers: { "content-type": "application/json", "content-length": body.length, authorization: `Bearer ${key}` }
      },
      (answer) => {
        const out: Array<Buffer> = []
        answer.on("data", (chunk: Buffer) => out.push(chunk))
        answer.on("end", () => {
          const payload = Buffer.concat(out)
          res.writeHead(answer.statusCode ?? 502, { "content-type": "application/json", "content-length": payload.length })
          res.end(payload)
        })
      }
    )
    forward.on("error", () => res.writeHead(502).end())
    forward.end(body)
  })
})

server.listen(Number(process.env.BARE_PROXY_PORT), "127.0.0.1", () => console.log("bare proxy listening"))
process.on("SIGTERM", () => process.exit(0))
