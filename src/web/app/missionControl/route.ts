/**
 * Mission control's own routes (`/integrations/mission_control/…`, declared by the integration's
 * router at startup, so not in the typed client): called with the session's token, refreshed once
 * on a 401 as typed calls are; a refusal rejects with the server's `{detail}`.
 */
import type { AuthSession } from "../../shared/session.ts"

const base = "/integrations/mission_control"

/** The scopes mission control's router declares for its routes (integrations/mission_control/router.ts). */
export const missionScopes = { read: "mission_control:read", write: "mission_control:write" } as const

export const missionRoute = async <A,>(auth: AuthSession, path: string, init: { readonly method?: string; readonly body?: unknown } = {}): Promise<A> => {
  const send = () =>
    fetch(`${base}${path}`, {
      method: init.method ?? "GET",
      headers: {
        ...(auth.accessToken ? { authorization: `Bearer ${auth.accessToken}` } : {}),
        ...(init.body === undefined ? {} : { "content-type": "application/json" })
      },
      ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) })
    })
  let response = await send()
  if (response.status === 401 && (await auth.refresh())) response = await send()
  const body = (await response.json().catch(() => null)) as unknown
  // Rejected as the typed client's errors are, with `detail`, so describeError reads it alike.
  if (!response.ok) throw { detail: (body as { detail?: unknown } | null)?.detail ?? `HTTP ${response.status}` }
  return body as A
}
