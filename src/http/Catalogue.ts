/**
 * The endpoint catalogue, reflected from the HttpApi definition at startup: method, path,
 * description and required scope of every endpoint. An endpoint without a scope declaration stops
 * startup, so no route can be left unchecked by accident.
 */
import { HttpApi, OpenApi } from "@effect/platform"
import { Context, Option } from "effect"
import { RequiredScope } from "../auth/RequiredScope.ts"

export interface CatalogueEntry {
  readonly method: string
  readonly path: string
  readonly description: string
  readonly scope: string
  readonly group: string
  readonly name: string
}

export interface Catalogue {
  readonly entries: ReadonlyArray<CatalogueEntry>
  /** The entry for a router match (`GET` + `/api/v1/things/:id`). */
  readonly lookup: (method: string, routePath: string) => CatalogueEntry | undefined
}

export class EndpointCatalogue extends Context.Tag("cairn/EndpointCatalogue")<EndpointCatalogue, Catalogue>() {}

const key = (method: string, path: string) => `${method.toUpperCase()} ${path}`

export const fromApi = (api: HttpApi.HttpApi.Any): Catalogue => {
  const entries: Array<CatalogueEntry> = []
  const missing: Array<string> = []
  HttpApi.reflect(api as any, {
    onGroup: () => {},
    onEndpoint: ({ endpoint, group, mergedAnnotations }) => {
      const scope = Context.getOption(mergedAnnotations, RequiredScope)
      const description =
        Option.getOrUndefined(Context.getOption(endpoint.annotations, OpenApi.Description)) ??
        Option.getOrUndefined(Context.getOption(endpoint.annotations, OpenApi.Summary)) ??
        endpoint.name
      if (Option.isNone(scope)) {
        missing.push(key(endpoint.method, endpoint.path))
        return
      }
      entries.push({
        method: endpoint.method,
        path: endpoint.path,
        description,
        scope: scope.value,
        group: group.identifier,
        name: endpoint.name
      })
    }
  })
  if (missing.length > 0) {
    throw new Error(`Endpoints without a RequiredScope annotation: ${missing.join(", ")}`)
  }
  const byKey = new Map(entries.map((entry) => [key(entry.method, entry.path), entry]))
  return { entries, lookup: (method, routePath) => byKey.get(key(method, routePath)) }
}
