import { HttpApiBuilder, HttpServerResponse, OpenApi } from "@effect/platform"
import { Effect } from "effect"
import { CairnApi } from "../Api.ts"
import { type CatalogueEntry, EndpointCatalogue } from "../auth/Catalogue.ts"
import { Principal } from "../auth/Principal.ts"
import {
  allScopes,
  AUTHENTICATED,
  deprecatedScopes,
  expandScopes,
  grants,
  memberScopes,
  presets,
  PUBLIC,
  type Scope,
  scopeGroups
} from "../auth/Scopes.ts"
import { EndpointEntry, ScopeCatalogue } from "./Model.ts"
import { renderReference } from "./Reference.ts"

const standing: Partial<Record<Scope, Scope>> = deprecatedScopes
const standsInFor = (scope: Scope): Scope | undefined => standing[scope]

const implications = allScopes
  .map((scope) => ({
    scope,
    implies: [...expandScopes([scope]), ...(standsInFor(scope) ? [standsInFor(scope)!] : [])].filter((s) => s !== scope)
  }))
  .filter((entry) => entry.implies.length > 0)

/** The scope catalogue with the routes each scope opens, read off the endpoint catalogue: one source for both. */
const scopeCatalogueOf = (entries: ReadonlyArray<CatalogueEntry>) => {
  const routesOf = (scope: Scope) =>
    entries.filter((entry) => entry.scope === (standsInFor(scope) ?? scope)).map((entry) => `${entry.method} ${entry.path}`)
  return new ScopeCatalogue({
    groups: scopeGroups.map((group) => ({
      name: group.name,
      scopes: group.scopes.map((s) => ({
        ...s,
        routes: routesOf(s.name),
        ...(standsInFor(s.name) ? { deprecated_for: standsInFor(s.name) } : {})
      }))
    })),
    implications: [{ scope: "admin", implies: allScopes.filter((s) => s !== "admin") }, ...implications],
    presets: presets.map((preset) => ({ ...preset })),
    member_scopes: memberScopes
  })
}

export const DiscoverHttpLive = HttpApiBuilder.group(CairnApi, "discover", (handlers) =>
  Effect.gen(function*() {
    const catalogue = yield* EndpointCatalogue
    // Made on the first request for it (OpenApi caches it then), not at every start of the server.
    const spec = () => OpenApi.fromApi(CairnApi)
    const scopeCatalogue = scopeCatalogueOf(catalogue.entries)
    const usable = (scopes: ReadonlySet<Scope>): ReadonlyArray<CatalogueEntry> =>
      catalogue.entries.filter(
        (entry) => entry.scope === PUBLIC || entry.scope === AUTHENTICATED || grants(scopes, entry.scope)
      )
    return handlers
      .handle("discover", ({ urlParams }) =>
        Effect.map(Principal, (principal) => {
          const entries = usable(principal.scopes)
          if (urlParams.detail === true) {
            // The markdown reference replaces the JSON list; returned as a raw response.
            return HttpServerResponse.text(renderReference(spec(), entries), {
              contentType: "text/markdown; charset=utf-8"
            }) as unknown as ReadonlyArray<EndpointEntry>
          }
          return entries.map(
            (entry) => new EndpointEntry({ method: entry.method, path: entry.path, description: entry.description, scope: entry.scope })
          )
        }))
      .handle("scopes", () => Effect.succeed(scopeCatalogue))
  }))
