/**
 * What the signed-in user may call, read from the API definition itself: each endpoint's
 * `RequiredScope` annotation (the one the server checks) through the endpoint catalogue. The app
 * shows a page or a control when the user's token carries the scope of the call behind it; the
 * server still checks every call.
 */
import { CairnApi } from "../../Api.ts"
import { fromApi } from "../../auth/Catalogue.ts"
import type { Scope } from "../../auth/Scopes.ts"
import type { CairnClient } from "../../client.ts"
import type { AuthSession } from "../shared/session.ts"

/** An endpoint of the typed client: its group and its name (`["bots", "create"]`). */
export type Endpoint = { readonly [G in keyof CairnClient]: readonly [G, keyof CairnClient[G] & string] }[keyof CairnClient]

const catalogue = fromApi(CairnApi)
const byName = new Map(catalogue.entries.map((entry) => [`${entry.group}.${entry.name}`, entry.scope]))

/** The scope an endpoint requires (`public` and `authenticated` included). */
export const scopeOf = ([group, name]: Endpoint) => {
  const scope = byName.get(`${group}.${name}`)
  if (scope === undefined) throw new Error(`No endpoint ${group}.${name} in the API`)
  return scope
}

/**
 * Whether the user's scopes allow calling the endpoint; a scope named directly (declared in
 * auth/Scopes.ts) is for an integration's own routes, which the typed client does not know.
 */
export const allows = (auth: AuthSession, endpoint: Endpoint | Scope) => {
  const scope = typeof endpoint === "string" ? endpoint : scopeOf(endpoint)
  return scope === "public" || scope === "authenticated" || auth.can(scope)
}
