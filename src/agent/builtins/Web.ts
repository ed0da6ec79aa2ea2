/**
 * `fetch_url`: a public web page as text. The outbound guard refuses private, loopback and
 * metadata addresses (unless FETCH_ALLOWED_HOSTS names them) and follows no redirect itself (the
 * model gets the new location and may fetch it, guarded again); the body is cut at FETCH_MAX_BYTES
 * and the whole call at FETCH_TIMEOUT_SECONDS; HTML is turned into text.
 */
import { Config, Effect, Schema } from "effect"
import { convert } from "html-to-text"
import { allowList, guardedRequest } from "../../http/Outbound.ts"
import { declareTool, ToolFailure } from "../Tool.ts"

const webConfig = Config.all({
  allowedHosts: Config.string("FETCH_ALLOWED_HOSTS").pipe(Config.withDefault("")),
  maxBytes: Config.integer("FETCH_MAX_BYTES").pipe(Config.withDefault(2 * 1024 * 1024)),
  timeoutSeconds: Config.number("FETCH_TIMEOUT_SECONDS").pipe(Config.withDefault(15))
})

/** What the model gets of a page at most; the rest is cut with a note. */
const maxTextChars = 40_000

const isHtml = (contentType: string, body: string) => /html/i.test(contentType) || /^\s*<(!doctype html|html)/i.test(body)

export const webTools = Effect.gen(function*() {
  const config = yield* webConfig
  const allowed = allowList(config.allowedHosts.split(","))
  const label = { what: "fetch_url", setting: "FETCH_ALLOWED_HOSTS" }

  const fetchUrl = yield* declareTool({
    name: "fetch_url",
    description: "Fetch a public web page (http or https) and answer its text: HTML is converted to plain text with links kept.",
    effect: "egress",
    parameters: Schema.Struct({ url: Schema.String.annotations({ description: "The page's http(s) URL" }) }),
    success: Schema.String,
    timeoutMs: config.timeoutSeconds * 1000 + 1000,
    handler: ({ url }) =>
      Effect.gen(function*() {
        // The signal aborts when the call is interrupted (its timeout, a cancelled run).
        const response = yield* Effect.tryPromise({
          try: (signal) =>
            guardedRequest(url, {
              method: "GET",
              headers: { accept: "text/html, text/plain, application/json;q=0.9, */*;q=0.5", "user-agent": "Cairn fetch_url" },
              timeoutMs: config.timeoutSeconds * 1000,
              allowed,
              label,
              signal,
              maxBytes: config.maxBytes
            }),
          catch: (error) => new ToolFailure({ message: (error as { message?: string }).message ?? String(error) })
        })
        if (response.status >= 300 && response.status < 400 && response.headers.location) {
          return `${url} redirects (${response.status}) to ${new URL(response.headers.location, url).href}; fetch that URL to follow it.`
        }
        const type = response.headers["content-type"] ?? ""
        if (/^(image|audio|video)\/|octet-stream|pdf|zip/i.test(type)) {
          return `${url} answered ${response.status} with ${type} (${response.body.length} bytes), which is not text.`
        }
        const raw = response.body.toString("utf8")
        const body = isHtml(type, raw) ? convert(raw, { wordwrap: false, selectors: [{ selector: "img", format: "skip" }] }) : raw
        const cut = body.length > maxTextChars || response.truncated === true
        return [
          `${url} answered ${response.status}${type ? ` (${type.split(";")[0]})` : ""}:`,
          body.slice(0, maxTextChars).trim(),
          ...(cut
            ? [`[Cut: the page is longer than ${response.truncated ? `${config.maxBytes} bytes` : `${maxTextChars} characters`}]`]
            : [])
        ].join("\n\n")
      })
  })

  return [fetchUrl]
})
