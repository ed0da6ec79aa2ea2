/**
 * An integration's routes as an HttpApiGroup mounted at /integrations/<id>/, so they get OpenAPI
 * entries, authentication with a scope per route, and discover entries like core routes. Handlers
 * are the integration's plain functions; bodies are read here (JSON when it parses, else text), so
 * a POST without a body is fine.
 */
import { HttpApiBuilder, HttpApiEndpoint, HttpApiGroup, HttpMethod, HttpServerRequest, HttpServerResponse, OpenApi } from "@effect/platform"
import { Effect, Layer, Schema } from "effect"
import * as crypto from "node:crypto"
import { safeEqual } from "../access/Authenticator.ts"
import { Authentication } from "../auth/Authentication.ts"
import { RequiredScope } from "../auth/RequiredScope.ts"
import { isScope, PUBLIC, type ScopeRequirement } from "../auth/Scopes.ts"
import { internalErrorBody, ValidationError } from "../contract/Errors.ts"
import { pathParams } from "../contract/Params.ts"
import { type IntegrationContext, isInvalidArgument, type RouteDefinition, type RouteSecret } from "../sdk/index.ts"
import { tracedFn } from "../telemetry/Spans.ts"

export const groupName = (integrationId: string) => `integration_${integrationId}`

const paramNames = (path: string) => [...path.matchAll(/:([A-Za-z_][A-Za-z0-9_]*)/g)].map((m) => m[1]!)

const endpointName = (index: number) => `route${index}`

/**
 * The loader refused unknown scope names already (`Loader.checkRoute`); none named: `admin`. A
 * shared-secret route passes the key check (`PUBLIC`) and is checked by `sharedSecret` instead.
 */
const requiredScope = (route: RouteDefinition): ScopeRequirement =>
  route.secret !== undefined ? PUBLIC : route.scope !== undefined && isScope(route.scope) ? route.scope : "admin"

const refused = { detail: "Invalid or missing webhook token" }

/**
 * Whether a shared-secret route's caller sent the value of the setting the route names (in its
 * header or query parameter), compared in constant time. An unset setting refuses everything (a
 * 401 like a wrong secret, so a caller learns nothing of the configuration; the log says why).
 */
const sharedSecret = tracedFn("Integrations.sharedSecret", (
  integrationId: string,
  secret: RouteSecret,
  context: IntegrationContext,
  headers: Readonly<Record<string, string | undefined>>,
  query: Readonly<Record<string, string | ReadonlyArray<string>>>,
  rawBody: Uint8Array | undefined
) =>
  Effect.gen(function*() {
    const expected = yield* Effect.orDie(Effect.tryPromise(() => context.settings.get(secret.setting)))
    if (!expected) {
      yield* Effect.logWarning(`Integration ${integrationId}: ${secret.setting} is not set, so its webhook refuses every call`)
      return false
    }
    if (secret.signature !== undefined) {
      const sent = headers[secret.signature.header.toLowerCase()]
      const digest = crypto.createHmac("sha256", expected).update(rawBody ?? new Uint8Array()).digest("hex")
      return sent !== undefined && safeEqual(sent, `${secret.signature.prefix ?? ""}${digest}`)
    }
    const fromQuery = secret.query === undefined ? undefined : query[secret.query]
    const given = [
      secret.header === undefined ? undefined : headers[secret.header.toLowerCase()],
      typeof fromQuery === "string" ? fromQuery : fromQuery?.[0]
    ]
    return given.map((value) => value !== undefined && safeEqual(value, expected)).some(Boolean)
  }))

export const routeGroup = (integrationId: string, routes: ReadonlyArray<RouteDefinition>) => {
  let group: HttpApiGroup.HttpApiGroup<string, any, any, any, boolean> = HttpApiGroup.make(groupName(integrationId)) as any
  routes.forEach((route, index) => {
    const fullPath = `/integrations/${integrationId}${route.path === "/" ? "" : route.path}` as `/${string}`
    let endpoint: any = HttpApiEndpoint.make(route.method)(endpointName(index), fullPath)
    const names = paramNames(route.path)
    if (names.length > 0) endpoint = endpoint.setPath(pathParams(Object.fromEntries(names.map((name) => [name, Schema.String]))))
    endpoint = endpoint
      .addSuccess(Schema.Unknown)
      .annotate(RequiredScope, requiredScope(route))
      .annotate(OpenApi.Description, route.description || `${route.method} ${route.path} of ${integrationId}`)
    group = group.add(endpoint)
  })
  return group.middleware(Authentication).annotate(OpenApi.Title, `Integration: ${integrationId}`)
}

const isResponse = (value: unknown): value is { status: number; body?: unknown; headers?: Record<string, string> } =>
  typeof value === "object" && value !== null && (value as { __response?: unknown }).__response === true

const handle = (route: RouteDefinition, context: IntegrationContext, params: Record<string, string>) =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const query = yield* HttpServerRequest.ParsedSearchParams
    // A body the edge refused (too large, NUL, too deep) is answered as it says, never read as empty.
    const text = HttpMethod.hasBody(request.method) ? yield* Effect.orDie(request.text) : undefined
    // A signed route's signature covers the body's bytes exactly as they were sent (the same read).
    const bytes = route.secret?.signature !== undefined && text !== undefined
      ? new Uint8Array(yield* Effect.orDie(request.arrayBuffer))
      : undefined
    if (route.secret !== undefined && !(yield* sharedSecret(context.id, route.secret, context, request.headers, query, bytes))) {
      return yield* HttpServerResponse.json(refused, { status: 401 })
    }
    let body: unknown = undefined
    if (text !== undefined && text.length > 0) {
      const isJson = (request.headers["content-type"] ?? "application/json").includes("json")
      try {
        body = JSON.parse(text)
      } catch {
        if (isJson) return yield* ValidationError.single(["body"], "Request body is not valid JSON", "json_invalid")
        body = text
      }
    }
    const outcome = yield* Effect.either(
      Effect.tryPromise(async () => route.handler({ params, query, body, headers: request.headers }, context))
    )
    if (outcome._tag === "Left" && isInvalidArgument(outcome.left.error)) {
      // Cairn refused what the handler passed on from the request: the caller's input, a 422.
      return yield* ValidationError.single(["body"], outcome.left.error.message, "invalid_argument")
    }
    if (outcome._tag === "Left") {
      yield* Effect.logError(`Integration ${context.id} route ${route.method} ${route.path} failed`, outcome.left.error)
      return yield* HttpServerResponse.json(internalErrorBody, { status: 500 })
    }
    const result = outcome.right
    if (isResponse(result)) {
      return result.body === undefined
        ? HttpServerResponse.empty({ status: result.status, headers: result.headers ?? {} })
        : yield* HttpServerResponse.json(result.body, { status: result.status, headers: result.headers ?? {} })
    }
    return yield* HttpServerResponse.json(result ?? null)
  }).pipe(Effect.catchTag("HttpBodyError", () => HttpServerResponse.json(internalErrorBody, { status: 500 })))

/** The handlers of one integration's group, for an API that contains that group. */
export const routeHandlers = (
  api: unknown,
  integrationId: string,
  routes: ReadonlyArray<RouteDefinition>,
  context: IntegrationContext
): Layer.Layer<never> =>
  // The group is built at runtime, so its types are too: the handlers are checked by the loader.
  (HttpApiBuilder.group as any)(api, groupName(integrationId), (handlers: any) =>
    routes.reduce(
      (acc, route, index) =>
        acc.handle(endpointName(index), (request: { path?: Record<string, string> }) => handle(route, context, request.path ?? {})),
      handlers
    ))

/** The core API with every loaded integration's routes added, and the handler layers for them. */
export const withIntegrationRoutes = <A>(
  api: A,
  integrations: ReadonlyArray<
    { readonly id: string; readonly routes: ReadonlyArray<RouteDefinition>; readonly context: IntegrationContext }
  >
) => {
  const mounted = integrations.filter((integration) => integration.routes.length > 0)
  const full = mounted.reduce((acc: any, integration) => acc.add(routeGroup(integration.id, integration.routes)), api) as A
  const handlers = mounted.map((integration) => routeHandlers(full, integration.id, integration.routes, integration.context))
  return { api: full, handlers }
}
