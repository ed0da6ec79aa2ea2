/**
 * A host site for the widget's browser tests: a real node:http server on its own loopback port (so
 * another origin than Cairn's) whose page carries the one-line embed script, and whose backend
 * route mints widget tokens through Cairn with the host's own key, as a customer's backend would.
 */
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import type { Scope } from "../../src/auth/Scopes.ts"
import { CreateBot } from "../../src/bots/Model.ts"
import { createKey } from "../auth/helpers.ts"
import { type FakeLlm, fakeLlmEnv, startFakeLlm } from "../fixtures/fakeLlm.ts"
import { withDefaults } from "./client.ts"
import { startServer, type TestServer } from "./server.ts"

export interface Mint {
  readonly bot: string
  readonly token: string
  readonly expires_at: string
  readonly at: number
}

export interface PageOptions {
  readonly bot: string
  readonly renewSeconds?: number
  readonly mintBot?: string
  readonly extraFrame?: string
  /** Default `inline` (the widget where the tag stands); `launcher` puts it behind the corner button. */
  readonly mode?: "inline" | "launcher"
  readonly theme?: "light" | "dark"
  readonly accent?: string
  readonly greeting?: string
}

export interface WidgetHost {
  readonly origin: string
  /** Every token the backend minted, oldest first. */
  readonly mints: Array<Mint>
  /**
   * The page embedding `bot`'s widget; `mintBot` mints for another bot (a misconfigured host);
   * `extraFrame` is another page framed beside the widget (a forger on another origin).
   */
  readonly pageUrl: (options: PageOptions) => string
  /** Serves `html` at `path` on the host (a snippet pasted from the console, say). */
  readonly serve: (path: string, html: string) => string
  /** A page that, framed beside a widget, posts forged handshake messages to every frame and to its parent. */
  readonly forgerUrl: string
  /** Where Cairn is, once it runs (the host starts first: Cairn's allow-list names the host's origin). */
  cairn: { baseUrl: string; key: string } | null
  readonly close: () => Promise<void>
}

const attributes = (query: URLSearchParams) =>
  (["renew-seconds", "mode", "theme", "accent", "greeting"] as const)
    .map((name) => [name, query.get(name)] as const)
    .filter(([, value]) => value !== null)
    .map(([name, value]) => ` data-${name}="${value!.replace(/&/g, "&amp;").replace(/"/g, "&quot;")}"`)
    .join("")

/** A host page: a heading and some text (a landmark and a heading, as a real page has), and the embed tag. */
export const hostPage = (tag: string, extraFrame: string | null = null) =>
  `<!doctype html>
<html lang="en">
  <head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>A host page</title></head>
  <body>
    <main>
      <h1>Example shop</h1>
      <p>Maps of places that do not exist yet.</p>
      ${extraFrame ? `<iframe src="${extraFrame}" title="other" width="10" height="10"></iframe>` : ""}
    </main>
    ${tag}
  </body>
</html>`

const page = (cairnUrl: string, bot: string, tokenUrl: string, query: URLSearchParams) =>
  hostPage(
    `<script src="${cairnUrl}/widget.js" data-bot="${bot}" data-token-url="${tokenUrl}"${attributes(query)} async></script>`,
    query.get("frame")
  )

/**
 * Every 100 ms for 3 s: a token with no scopes to every frame of its parent (a widget that took it
 * would lose its composer), and a token request to the parent (an embed script that took it would
 * mint). Counts its posts in `window.posted`.
 */
const forger = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>forger</title></head><body><script>
  const forged = "eyJhbGciOiJIUzI1NiJ9." + btoa(JSON.stringify({ kind: "widget", scopes: [] })).replace(/=+$/, "") + ".c2lnbmF0dXJl"
  window.posted = 0
  const timer = setInterval(() => {
    for (let i = 0; i < parent.frames.length; i++) parent.frames[i].postMessage({ type: "cairn-widget:token", token: forged }, "*")
    parent.postMessage({ type: "cairn-widget:token-request", bot: "helper", reason: "start" }, "*")
    if (++window.posted >= 30) clearInterval(timer)
  }, 100)
</script></body></html>`

export const startWidgetHost = async (): Promise<WidgetHost> => {
  const mints: Array<Mint> = []
  const pages = new Map<string, string>()
  const host: WidgetHost = {
    origin: "",
    mints,
    cairn: null,
    pageUrl: ({ bot, renewSeconds, mintBot, extraFrame, mode, theme, accent, greeting }) => {
      const query = new URLSearchParams({
        bot,
        mode: mode ?? "inline",
        ...(renewSeconds ? { "renew-seconds": String(renewSeconds) } : {}),
        ...(mintBot ? { mint: mintBot } : {}),
        ...(extraFrame ? { frame: extraFrame } : {}),
        ...(theme ? { theme } : {}),
        ...(accent ? { accent } : {}),
        ...(greeting ? { greeting } : {})
      })
      return `${host.origin}/page?${query}`
    },
    serve: (path, html) => {
      pages.set(path, html)
      return `${host.origin}${path}`
    },
    get forgerUrl() {
      return `${host.origin}/forger`
    },
    close: () => new Promise((resolve) => server.close(() => resolve()))
  }
  const server: Server = createServer(async (req, res) => {
    const url = new URL(req.url ?? "/", "http://host")
    if (!host.cairn) return res.writeHead(503).end()
    if (req.method === "GET" && url.pathname === "/page") {
      const bot = url.searchParams.get("bot") ?? ""
      const tokenUrl = `/token?bot=${encodeURIComponent(url.searchParams.get("mint") ?? bot)}`
      res.writeHead(200, { "content-type": "text/html; charset=utf-8" })
      return res.end(page(host.cairn.baseUrl, bot, tokenUrl, url.searchParams))
    }
    if (req.method === "GET" && pages.has(url.pathname)) {
      res.writeHead(200, { "content-type": "text/html; charset=utf-8" })
      return res.end(pages.get(url.pathname))
    }
    if (req.method === "GET" && url.pathname === "/forger") {
      res.writeHead(200, { "content-type": "text/html; charset=utf-8" })
      return res.end(forger)
    }
    if (req.method === "POST" && url.pathname === "/token") {
      // The host's backend: mints with its key, never showing the key to the browser.
      const bot = url.searchParams.get("bot") ?? ""
      const answer = await fetch(`${host.cairn.baseUrl}/api/v1/widget-auth/mint`, {
        method: "POST",
        headers: { authorization: `Bearer ${host.cairn.key}`, "content-type": "application/json" },
        body: JSON.stringify({ source_bot_id: bot })
      })
      const body = (await answer.json()) as { token: string; expires_at: string }
      if (answer.ok) mints.push({ bot, token: body.token, expires_at: body.expires_at, at: Date.now() })
      res.writeHead(answer.status, { "content-type": "application/json" })
      return res.end(JSON.stringify(answer.ok ? { token: body.token, expires_at: body.expires_at } : body))
    }
    // A browser asks every site for its icon; an answer keeps the console free of 404s.
    res.writeHead(url.pathname === "/favicon.ico" ? 204 : 404).end()
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  Object.assign(host, { origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}` })
  return host
}

/** The widget's whole world for a browser test: the fake LLM, the host site, and Cairn on PGlite allowing the host to frame it. */
export interface WidgetStack {
  readonly llm: FakeLlm
  readonly host: WidgetHost
  readonly server: TestServer
  /** A bot whose key (the widget token's ceiling) holds `scopes`. */
  readonly addBot: (id: string, scopes: ReadonlyArray<Scope>) => Promise<void>
  readonly close: () => Promise<void>
}

const botRequest = withDefaults(CreateBot)

export const startWidgetStack = async (env: Record<string, string> = {}): Promise<WidgetStack> => {
  const llm = await startFakeLlm()
  const host = await startWidgetHost()
  const server = await startServer({ backend: "pglite", env: { ...fakeLlmEnv(llm), WIDGET_EMBED_ORIGINS: host.origin, ...env } })
  // The host's own key: it may mint for any bot whose key holds no more than these.
  const hostKey = await createKey(server, ["bots:read", "chat", "attachments:write", "sessions:read"])
  host.cairn = { baseUrl: server.baseUrl, key: hostKey.key }
  return {
    llm,
    host,
    server,
    addBot: async (id, scopes) => {
      const key = await createKey(server, scopes)
      await server.call((client) => client.bots.create({ payload: botRequest({ id, name: `Bot ${id}`, api_key_id: key.id }) }))
    },
    close: async () => {
      await server.close()
      await host.close()
      await llm.close()
    }
  }
}
