/**
 * The REST API of GitHub (and of GitHub Enterprise, Gitea and Forgejo, which answer the same
 * routes): bearer token, `Link` pagination kept on the API's own origin, errors that say what went
 * wrong (the rate limit included).
 */
import type { HttpResponse, IntegrationContext } from "../../src/sdk/index.ts"
import { type GithubConfig, readConfig } from "./config.ts"

export class GithubApiError extends Error {
  constructor(message: string, readonly status: number) {
    super(message)
  }
}

/** The `rel="next"` URL of a `Link` header, if any. */
export const nextLink = (link: string | undefined): string | undefined =>
  link?.split(",").map((part) => /<([^>]+)>\s*;\s*rel="?next"?/.exec(part)?.[1]).find((url) => url !== undefined)

const failure = (method: string, path: string, response: HttpResponse) => {
  let message = response.text.slice(0, 300)
  try {
    message = String(response.json<{ message?: unknown }>().message ?? message)
  } catch {
    // not JSON: the text as it came
  }
  const limited = response.headers["x-ratelimit-remaining"] === "0"
  const reset = response.headers["x-ratelimit-reset"]
  const why = limited ? ` (rate limit exhausted${reset ? `, resets at ${new Date(Number(reset) * 1000).toISOString()}` : ""})` : ""
  return new GithubApiError(`GitHub API ${method} ${path}: ${response.status} ${message}${why}`, response.status)
}

export interface GithubApi {
  readonly config: GithubConfig
  readonly get: <T>(path: string) => Promise<T>
  readonly post: <T>(path: string, json: unknown) => Promise<T>
  /** Every page of a list (`per_page=100`), at most `maxItems` items; `more` when some were left. */
  readonly list: <T>(path: string, maxItems?: number) => Promise<{ readonly items: Array<T>; readonly more: boolean }>
}

export const githubApi = async (cairn: IntegrationContext): Promise<GithubApi> => {
  const config = readConfig(await cairn.settings.all())
  if (!config.token) throw new Error("GITHUB_TOKEN is not set")
  const headers = {
    authorization: `Bearer ${config.token}`,
    accept: "application/vnd.github+json",
    "x-github-api-version": "2022-11-28",
    "user-agent": "cairn-github-integration"
  }
  const origin = new URL(config.apiUrl).origin
  const call = async (method: "GET" | "POST", url: string, json?: unknown) => {
    const response = await cairn.http.request(url, { method, headers, ...(json === undefined ? {} : { json }), timeoutMs: 20_000 })
    if (!response.ok) throw failure(method, new URL(url).pathname, response)
    return response
  }
  return {
    config,
    get: async <T>(path: string) => (await call("GET", `${config.apiUrl}${path}`)).json<T>(),
    post: async <T>(path: string, json: unknown) => (await call("POST", `${config.apiUrl}${path}`, json)).json<T>(),
    list: async <T>(path: string, maxItems = 3000) => {
      const items: Array<T> = []
      let url: string | undefined = `${config.apiUrl}${path}${path.includes("?") ? "&" : "?"}per_page=100`
      while (url !== undefined && items.length < maxItems) {
        const response = await call("GET", url)
        items.push(...response.json<Array<T>>())
        const next = nextLink(response.headers.link)
        // The token goes to the API's own origin only, whatever a Link header says.
        url = next !== undefined && new URL(next, url).origin === origin ? new URL(next, url).href : undefined
      }
      return { items: items.slice(0, maxItems), more: url !== undefined || items.length > maxItems }
    }
  }
}
