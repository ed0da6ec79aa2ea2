/**
 * The endpoint catalogue, reflected from the HttpApi definition at startup: method, path,
 * description, required scope and chat rate limit of every endpoint. An endpoint without a scope declaration stops
 * startup, so no route can be left unchecked by accident.
 */
import { HttpApi, OpenApi } from "@effect/platform"
import { Context, Layer, Option } from "effect"
import { ChatRateLimited } from "./ChatRateLimited.ts"
import { RequiredScope } from "./RequiredScope.ts"
import type { ScopeRequirement } from "./Scopes.ts"

export interface CatalogueEntry {
  readonly method: string
  readonly path: string
  readonly description: string
  readonly scope: ScopeRequirement
  /** Whether RATE_LIMIT_CHAT applies too (the `ChatRateLimited` annotation). */
  readonly chatRateLimited: boolean
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
      const description = Option.getOrUndefined(Context.getOption(endpoint.annotations, OpenApi.Description)) ??
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
        chatRateLimited: Option.getOrElse(Context.getOption(mergedAnnotations, ChatRateLimited), () => false),
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

/**
 * Effect writes `$id: "/schemas/unknown"` (and the like) for `Unknown`/`Any` schemas; repeated, it
 * makes the document invalid, and it carries no information, so it is dropped.
 */
const dropSchemaIds = (node: unknown): void => {
  if (Array.isArray(node)) return node.forEach(dropSchemaIds)
  if (node === null || typeof node !== "object") return
  const record = node as Record<string, unknown>
  if (typeof record.$id === "string" && record.$id.startsWith("/schemas/")) delete record.$id
  for (const value of Object.values(record)) dropSchemaIds(value)
}

/** The OpenAPI document: each operation names its scope; the generic 400 never happens here. */
const documentScopes = (catalogue: Catalogue) => (spec: OpenApi.OpenAPISpec) => {
  dropSchemaIds(spec)
  for (const [path, item] of Object.entries(spec.paths)) {
    for (const [method, operation] of Object.entries(item as Record<string, any>)) {
      if (!operation || typeof operation !== "object" || !("responses" in operation)) continue
      delete operation.responses["400"]
      const routePath = path.replace(/\{([^}]+)\}/g, ":$1")
      const entry = catalogue.lookup(method, routePath)
      if (entry) operation["x-required-scope"] = entry.scope
    }
  }
  return spec
}

/** Annotates an API with the catalogue-derived OpenAPI details. */
export const documented = <A extends HttpApi.HttpApi.Any>(api: A, catalogue: Catalogue): A =>
  (api as any).annotate(OpenApi.Transform, documentScopes(catalogue)) as A

/** The catalogue of an API, as a layer, built once at startup. */
export const catalogueLayer = (api: HttpApi.HttpApi.Any) => Layer.sync(EndpointCatalogue, () => fromApi(api))
