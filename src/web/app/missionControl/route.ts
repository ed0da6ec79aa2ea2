/**
 * Mission control's own routes (`/integrations/mission_control/…`, declared by the integration's
 * router at startup, so not in the typed client): called with the session's token, refreshed once
 * on a 401 as typed calls are; a refusal rejects with the server's `{detail}`.
 */
import type { Scope } from "../../../auth/Scopes.ts"
import type { AuthSession } from "../../shared/session.ts"
import { fetchRoute, refusal } from "../integrations/routeFetch.ts"

const base = "/integrations/mission_control"

/** The scopes mission control's router declares for its routes (integrations/mission_control/router.ts). */
export const missionScopes = { read: "mission_control:read", write: "mission_control:write" } as const satisfies Record<string, Scope>

export const missionRoute = async <A>(
  auth: AuthSession,
  path: string,
  init: { readonly method?: string; readonly body?: unknown } = {}
): Promise<A> => {
  const response = await fetchRoute(auth, `${base}${path}`, init)
  // Rejected as the typed client's errors are, with `detail`, so describeError reads it alike.
  if (!response.ok) throw { detail: await refusal(response) }
  return (await response.json()) as A
}
