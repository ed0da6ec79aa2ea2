/**
 * How an MCP client learns to authenticate to `/mcp`: the OAuth 2.0 Protected Resource Metadata
 * (RFC 9728) at `/.well-known/oauth-protected-resource` (the server) and its path-suffixed form
 * `/.well-known/oauth-protected-resource/mcp` (the MCP endpoint), and the `WWW-Authenticate`
 * challenge of a 401 that points to it (the MCP specification's authorization section).
 *
 * No authorization server is listed: Cairn takes only its own credentials (the static key, scoped
 * keys, its user and widget tokens), never an access token of another issuer, so naming one (the
 * OIDC provider people sign in with, say) would send a client into an OAuth flow whose token Cairn
 * refuses. A client is configured with a key instead, sent as `Authorization: Bearer`.
 */
import type { HttpServerRequest } from "@effect/platform"
import type { Scope } from "../auth/Scopes.ts"
import type { ProtectedResourceMetadata } from "./Model.ts"

export const mcpPath = "/mcp"
export const metadataPath = "/.well-known/oauth-protected-resource"
/** The metadata of the MCP endpoint: RFC 9728's well-known path with the resource's path appended. */
export const mcpMetadataPath = `${metadataPath}${mcpPath}`

/** The scopes that decide what an MCP client sees: one per tool, and the workspace files. */
export const mcpScopes: ReadonlyArray<Scope> = ["chat", "documents:read", "bots:read", "workspaces.files:read"]

const first = (value: string | undefined) => value?.split(",")[0]?.trim() || undefined

/**
 * The origin a client reached: the Host header, or what a proxy in front says it was
 * (`X-Forwarded-Proto`, `X-Forwarded-Host`). Only the URLs this server names are built from it.
 */
export const publicOrigin = (request: HttpServerRequest.HttpServerRequest): string => {
  const proto = first(request.headers["x-forwarded-proto"]) ?? (request.url.startsWith("https:") ? "https" : "http")
  const host = first(request.headers["x-forwarded-host"]) ?? request.headers.host ?? "localhost"
  return `${proto === "https" ? "https" : "http"}://${host}`
}

/** The metadata document: of `/mcp` for the path-suffixed form, of the whole server (its origin) otherwise. */
export const resourceMetadata = (origin: string, resourcePath: "" | typeof mcpPath): typeof ProtectedResourceMetadata.Type => ({
  resource: `${origin}${resourcePath}`,
  bearer_methods_supported: ["header"],
  scopes_supported: mcpScopes,
  resource_name: resourcePath === mcpPath ? "Cairn MCP server" : "Cairn",
  resource_documentation: `${origin}/docs`
})

const quoted = (text: string) => `"${text.replace(/["\\]/g, "\\$&")}"`

/**
 * The challenge of a 401 from `/mcp` (RFC 6750 and RFC 9728 §5.1): where the metadata is, and
 * `error="invalid_token"` when a token was sent but is not valid (none sent: no error code).
 */
export const challenge = (origin: string, tokenSent: boolean, detail: string): string =>
  [
    `Bearer resource_metadata=${quoted(`${origin}${mcpMetadataPath}`)}`,
    ...(tokenSent ? [`error="invalid_token"`, `error_description=${quoted(detail)}`] : [])
  ].join(", ")
