/**
 * Serves the browser app (`src/web/`, built by Vite into `dist/web` during `npm install`) at `/`.
 *
 * The built files are read once, on the first request, and kept in memory with a gzip copy: the
 * whole app is a few hundred KB, and serving from memory costs no file-system call per request.
 * Hashed assets are cached for a year; the HTML entry points are revalidated every time so a new
 * build reaches browsers at once. Every page carries a strict Content-Security-Policy: scripts and
 * styles from this origin only, no inline script, no framing.
 *
 * Any GET path that is not an API route and not an asset is the app's own (client-side routing), so
 * a page load of it (a request that accepts HTML) answers `index.html` (history fallback); paths
 * under the server's own prefixes, and any request that does not ask for a page, keep their 404.
 *
 * `/widget/<bot>` is the embeddable chat (`widget.html`): the one page that may be framed, and only
 * by the origins in WIDGET_EMBED_ORIGINS (none by default) and the bot's own, set in the console. `/widget.js` is the embed script hosts
 * load from a stable URL, so it is revalidated like a page rather than hashed.
 */
import { HttpApiBuilder, HttpServerError, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect, Layer, Option } from "effect"
import { createHash } from "node:crypto"
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs"
import * as path from "node:path"
import { gzipSync } from "node:zlib"
import { projectDir } from "../config/ProjectRoot.ts"
import { WidgetFraming } from "./WidgetFraming.ts"
import { refusalFor } from "./WidgetRefusal.ts"

export const webDistDir = path.join(projectDir("dist"), "web")

/** Paths the server answers itself: an unknown one is a 404, never the app. */
const serverPrefixes = ["/api/", "/v1/", "/docs", "/redoc", "/openapi.json", "/health", "/integrations/", "/mcp"]

const contentTypes: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".ico": "image/x-icon",
  ".woff2": "font/woff2",
  ".json": "application/json",
  ".webmanifest": "application/manifest+json",
  ".txt": "text/plain; charset=utf-8"
}

interface WebFile {
  readonly body: Uint8Array
  readonly gzip: Uint8Array | undefined
  readonly contentType: string
  readonly etag: string
}

/** Compressing pays only for text of some size; images and fonts are compressed already. */
const compressible = (type: string, size: number) => size > 1024 && /^(text\/|application\/(json|manifest)|image\/svg)/.test(type)

const loadFiles = (root: string): ReadonlyMap<string, WebFile> => {
  const files = new Map<string, WebFile>()
  if (!existsSync(root)) return files
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const full = path.join(dir, name)
      if (statSync(full).isDirectory()) {
        walk(full)
        continue
      }
      const body = readFileSync(full)
      const contentType = contentTypes[path.extname(name)] ?? "application/octet-stream"
      const etag = `"${createHash("sha256").update(body).digest("base64url").slice(0, 22)}"`
      const gzip = compressible(contentType, body.length) ? gzipSync(body, { level: 9 }) : undefined
      files.set("/" + path.relative(root, full).split(path.sep).join("/"), { body, gzip, contentType, etag })
    }
  }
  walk(root)
  return files
}

/** The policy of every page: nothing from elsewhere, no inline script, no plugins, no framing. */
export const appContentSecurityPolicy = (frameAncestors: string) =>
  [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data: blob:",
    "media-src 'self' blob:",
    "connect-src 'self'",
    "font-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    `frame-ancestors ${frameAncestors}`
  ].join("; ")

const securityHeaders = (frameAncestors: string) => ({
  "content-security-policy": appContentSecurityPolicy(frameAncestors),
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  ...(frameAncestors === "'none'" ? { "x-frame-options": "DENY" } : {})
})

const immutable = "public, max-age=31536000, immutable"
const revalidate = "no-cache"

/** One built file as a response: 304 on a matching ETag, gzip when the client takes it. */
export const fileResponse = (
  request: HttpServerRequest.HttpServerRequest,
  file: WebFile,
  cacheControl: string,
  extraHeaders: Record<string, string> = {}
): HttpServerResponse.HttpServerResponse => {
  const headers: Record<string, string> = {
    "cache-control": cacheControl,
    etag: file.etag,
    vary: "accept-encoding",
    "x-content-type-options": "nosniff",
    ...extraHeaders
  }
  if (request.headers["if-none-match"] === file.etag) return HttpServerResponse.empty({ status: 304, headers })
  const gzip = file.gzip !== undefined && /\bgzip\b/.test(request.headers["accept-encoding"] ?? "")
  return HttpServerResponse.uint8Array(gzip ? file.gzip! : file.body, {
    contentType: file.contentType,
    headers: gzip ? { ...headers, "content-encoding": "gzip" } : headers
  })
}

const notBuilt = HttpServerResponse.text("The web app is not built: run `npm run build:web` (npm install does it).", {
  status: 503,
  headers: { "cache-control": "no-store" }
})

/** The built app, read on first use. */
export const makeWebFiles = (root: string = webDistDir) => {
  let files: ReadonlyMap<string, WebFile> | undefined
  return () => (files ??= loadFiles(root))
}

const acceptsHtml = (request: HttpServerRequest.HttpServerRequest) => (request.headers["accept"] ?? "").includes("text/html")

const isServerPath = (pathname: string) =>
  serverPrefixes.some((prefix) => pathname === prefix.replace(/\/$/, "") || pathname.startsWith(prefix))

/** `frame-ancestors` for the widget: the allowed embedding origins, or 'none' when there are none. */
export const widgetFrameAncestors = (origins: ReadonlyArray<string>) => (origins.length === 0 ? "'none'" : origins.join(" "))

/** A bot's widget page: `/widget/<bot>` with one non-empty segment. */
const widgetPage = /^\/widget\/[^/]+\/?$/

/** The app's routes on the API's router: assets, the widget's page, then the history fallback. */
export const layer = (root: string = webDistDir) => Layer.unwrapEffect(Effect.map(WidgetFraming, (framing) => routes(root, framing)))

/**
 * A bot's widget page, framed only by the origins allowed now (read per request: the console edits
 * them at runtime); a page naming another origin gets a page saying so, not a broken frame.
 */
const widgetResponse = (
  request: HttpServerRequest.HttpServerRequest,
  pathname: string,
  file: WebFile,
  framing: WidgetFraming["Type"]
) => {
  const bot = pathname.split("/")[2] ?? ""
  return Effect.map(framing.origins(bot), (origins) => {
    const refused = refusalFor(new URL(request.url, "http://local"), bot, origins)
    if (refused) return HttpServerResponse.text(refused.body, { contentType: "text/html; charset=utf-8", headers: refused.headers })
    return fileResponse(request, file, revalidate, securityHeaders(widgetFrameAncestors(origins)))
  })
}

const routes = (root: string, framing: WidgetFraming["Type"]) => {
  const files = makeWebFiles(root)
  return HttpApiBuilder.Router.use((router) =>
    router.get(
      "/*",
      Effect.gen(function*() {
        const request = yield* HttpServerRequest.HttpServerRequest
        const notFound = Effect.fail(new HttpServerError.RouteNotFound({ request }))
        const pathname = yield* Effect.try(() => decodeURIComponent(new URL(request.url, "http://local").pathname)).pipe(
          Effect.orElse(() => notFound)
        )
        if (isServerPath(pathname)) return yield* notFound
        const built = files()
        const file = Option.fromNullable(built.get(pathname)).pipe(Option.filter(() => !pathname.endsWith(".html")))
        // Hashed names change with their content, so they never need revalidating.
        if (Option.isSome(file)) return fileResponse(request, file.value, pathname.startsWith("/assets/") ? immutable : revalidate)
        if (pathname.startsWith("/assets/")) return yield* notFound
        if (widgetPage.test(pathname)) {
          const widget = built.get("/widget.html")
          return widget === undefined ? notBuilt : yield* widgetResponse(request, pathname, widget, framing)
        }
        // Only a page load (a browser asks for HTML) is the app's; any other client keeps the 404.
        if (!acceptsHtml(request)) return yield* notFound
        const index = built.get("/index.html")
        if (index === undefined) return notBuilt
        return fileResponse(request, index, revalidate, securityHeaders("'none'"))
      })
    )
  )
}
