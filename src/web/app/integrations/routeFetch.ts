/**
 * Calling an integration's own routes (`/integrations/<id>/…`): they are mounted at run time, so
 * the typed client does not know them. Same origin only, with the session's bearer; a 401 (the
 * token expired while the laptop slept) refreshes once and tries again, as `auth.call` does.
 */
import type { AuthSession } from "../../shared/session.ts"

/** A path on this server (`/…`, not `//host/…` nor an absolute URL): the only kind we call with a token. */
export const isLocalPath = (href: string) => href.startsWith("/") && !href.startsWith("//") && !href.startsWith("/\\")

export const fetchRoute = async (
  auth: AuthSession,
  path: string,
  init: { readonly method?: string; readonly body?: unknown } = {}
): Promise<Response> => {
  if (!isLocalPath(path)) throw new Error(`Not a path on this server: ${path}`)
  const send = () =>
    fetch(path, {
      method: init.method ?? "GET",
      headers: {
        ...(auth.accessToken ? { authorization: `Bearer ${auth.accessToken}` } : {}),
        ...(init.body === undefined ? {} : { "content-type": "application/json" })
      },
      ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) })
    })
  const response = await send()
  if (response.status === 401 && auth.accessToken !== undefined && (await auth.refresh())) return send()
  return response
}

/** A refused route's answer as one line: its `detail`, else the status. */
export const refusal = async (response: Response) => {
  try {
    const body = (await response.json()) as { detail?: unknown }
    if (typeof body.detail === "string") return body.detail
    if (Array.isArray(body.detail)) return body.detail.map((d: { msg?: string }) => d.msg ?? JSON.stringify(d)).join("; ")
  } catch {
    // Not JSON: the status says enough.
  }
  return `${response.status} ${response.statusText}`.trim()
}
