/**
 * The HTTP server: the API with its documentation routes, the error mapping that gives every
 * failure the spec's shape, request logging, and a graceful shutdown bounded by a grace period.
 */
import { HttpApi, HttpApiBuilder, HttpApiError, HttpMiddleware, HttpServer, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { Cause, Deferred, Effect, Layer, Option } from "effect"
import { Server } from "node:http"
import { AppConfig } from "../config/AppConfig.ts"
import {
  internalErrorBody,
  type Overloaded,
  retryAfterHeader,
  type TooManyRequests,
  type Unauthorized,
  ValidationError
} from "../contract/Errors.ts"
import { ShutdownSignal } from "../lifecycle/Shutdown.ts"
import { databaseRetryAfterSeconds, isDatabaseUnavailable } from "./DatabaseOutage.ts"
import { notFoundDetail, toValidationError } from "./DecodeErrors.ts"
import { refusalResponse, requestGuard, RequestRefused } from "./RequestGuard.ts"
import * as WebApp from "./WebApp.ts"

/** A database error for a duplicate key (PostgreSQL's and PGlite's SQLSTATE 23505), however wrapped. */
export const isUniqueViolation = (defect: unknown): boolean => {
  for (let error = defect, depth = 0; error && typeof error === "object" && depth < 4; depth++) {
    if ((error as { code?: unknown }).code === "23505") return true
    error = (error as { cause?: unknown }).cause
  }
  return false
}

const isRequestDecodeError = (defect: unknown) =>
  (defect as { _tag?: string; reason?: string })?._tag === "RequestError" &&
  (defect as { reason?: string }).reason === "Decode"

/** The guard's refusal of a body (too large, or JSON it does not take), as the platform's readers report it. */
const bodyRefusal = (error: unknown): RequestRefused | undefined => {
  const cause = isRequestDecodeError(error) ? (error as { cause?: unknown }).cause : undefined
  return cause instanceof RequestRefused ? cause : undefined
}

/**
 * Every failure inside the API gets the spec's shape here (the platform turns errors into bare
 * responses before any outer middleware could): decode failures and malformed JSON become 422 (an
 * `idPath` id that is not a UUID: 404), an unknown route 404, a 401 names its scheme
 * (`WWW-Authenticate: Bearer`), a 429 and a 503 for memory (`Overloaded`) carry Retry-After, other
 * declared errors are encoded by the API, the database out of reach is a 503 with Retry-After, and
 * anything else is logged with its cause and answered with a bare 500 that leaks nothing.
 */
const errorMapping = HttpApiBuilder.middleware((app) =>
  Effect.catchAllCause(
    app as Effect.Effect<HttpServerResponse.HttpServerResponse, unknown, any>,
    (cause): Effect.Effect<HttpServerResponse.HttpServerResponse, unknown> => {
      const failure = Cause.failureOption(cause)
      const defect = Cause.dieOption(cause)
      const refused = bodyRefusal(Option.getOrUndefined(failure) ?? Option.getOrUndefined(defect))
      if (refused) return Effect.succeed(refusalResponse(refused))
      if (isDatabaseUnavailable(Option.getOrUndefined(failure) ?? Option.getOrUndefined(defect))) {
        // The database is out of reach (down, failing over, out of connections): a while, not a bug.
        return Effect.zipRight(
          Effect.logWarning("The database did not answer a request", cause),
          HttpServerResponse.json(
            { detail: "The database is not answering; try again shortly" },
            { status: 503, headers: { "retry-after": String(databaseRetryAfterSeconds) } }
          )
        )
      }
      if (failure._tag === "Some") {
        const tag = (failure.value as { _tag?: string })?._tag
        if (tag === "HttpApiDecodeError") {
          const error = failure.value as HttpApiError.HttpApiDecodeError
          const notFound = notFoundDetail(error)
          if (notFound !== undefined) return HttpServerResponse.json({ detail: notFound }, { status: 404 })
          return Effect.fail(toValidationError(error))
        }
        if (tag === "RouteNotFound") return HttpServerResponse.json({ detail: "Not Found" }, { status: 404 })
        if (tag === "Unauthorized") {
          // RFC 9110 asks a 401 to name its scheme; MCP hosts and other generic clients read it.
          const error = failure.value as Unauthorized
          return HttpServerResponse.json({ detail: error.detail }, { status: 401, headers: { "www-authenticate": "Bearer" } })
        }
        if (tag === "TooManyRequests") {
          const error = failure.value as TooManyRequests
          return HttpServerResponse.json(
            { detail: error.detail },
            { status: 429, headers: { "retry-after": retryAfterHeader(error.retryAfterSeconds) } }
          )
        }
        if (tag === "Overloaded") {
          const error = failure.value as Overloaded
          return HttpServerResponse.json(
            { detail: error.detail },
            { status: 503, headers: { "retry-after": retryAfterHeader(error.retryAfterSeconds) } }
          )
        }
        return Effect.failCause(cause)
      }
      if (defect._tag === "Some" && isRequestDecodeError(defect.value)) {
        return Effect.fail(ValidationError.single(["body"], "Request body is not valid JSON", "json_invalid"))
      }
      // Two requests that create the same thing at once: the database let one in. Every such race
      // is the later request's conflict, wherever the check-then-insert sits.
      if (defect._tag === "Some" && isUniqueViolation(defect.value)) {
        return HttpServerResponse.json({ detail: "A request made the same thing at the same moment: it exists now" }, { status: 409 })
      }
      if (Cause.isInterruptedOnly(cause)) return Effect.failCause(cause)
      return Effect.zipRight(
        Effect.logError("Unhandled error while serving a request", cause),
        HttpServerResponse.json(internalErrorBody, { status: 500 })
      )
    }
  ) as any
)

const requestLogger = HttpMiddleware.make((app) =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const started = Date.now()
    const response = yield* app
    yield* Effect.logDebug("request").pipe(
      Effect.annotateLogs({
        method: request.method,
        // The path only: query strings can carry single-use codes (OIDC callback) or tokens.
        url: request.url.split("?", 1)[0],
        status: response.status,
        ms: Date.now() - started
      })
    )
    return response
  })
)

/** How often a stopping server closes the connections that have gone idle. */
const idleSweepMs = 100

/** Cuts connections still open after the grace period, so shutdown always ends. */
const gracefulShutdown = (server: Server) =>
  Layer.scopedDiscard(
    Effect.gen(function*() {
      const { shutdownGraceMs } = yield* AppConfig
      const shutdown = yield* ShutdownSignal
      yield* Effect.addFinalizer(() =>
        Effect.gen(function*() {
          // Runs end their streams with a final event; then idle connections go, and whatever is
          // still open after the grace period is cut.
          yield* Deferred.succeed(shutdown, undefined)
          server.closeIdleConnections()
          // A connection whose request ends within the grace (a run that finished) is closed once
          // idle, so the process exits when its work is done rather than at the grace's end.
          const sweep = setInterval(() => server.closeIdleConnections(), idleSweepMs).unref()
          server.once("close", () => clearInterval(sweep))
          setTimeout(() => {
            clearInterval(sweep)
            server.closeAllConnections()
          }, shutdownGraceMs).unref()
        })
      )
    })
  )

type DocsPath = `/${string}`

/**
 * An API docs page (Swagger UI, Scalar): each carries its viewer's bundled JavaScript, about 10 MB of
 * strings, so the module is imported on the page's first request rather than at start (when nobody
 * may ever open it). The library's own layer then builds the page into a router of its own, kept
 * for later requests.
 */
const docsPage = (
  path: DocsPath,
  load: () => Promise<{ readonly layer: (options: { readonly path: DocsPath }) => Layer.Layer<never, never, HttpApi.Api> }>
) =>
  HttpApiBuilder.Router.use((router) =>
    Effect.gen(function*() {
      const api = yield* HttpApi.Api
      const page = yield* Effect.cached(
        Effect.promise(load).pipe(
          Effect.flatMap(({ layer }) =>
            HttpApiBuilder.Router.router.pipe(
              Effect.provide(
                layer({ path }).pipe(
                  Layer.provideMerge(HttpApiBuilder.Router.Live),
                  Layer.provide(Layer.succeed(HttpApi.Api, api))
                )
              )
            )
          )
        )
      )
      yield* router.get(path, Effect.flatMap(page, (app) => app))
    })
  )

/** A middleware around the whole app, after the API has answered (its errors already encoded). */
export type AppMiddleware = <E, R>(
  app: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>
) => Effect.Effect<HttpServerResponse.HttpServerResponse, E, R | HttpServerRequest.HttpServerRequest>

/** How long an idle keep-alive connection stays open on the server's side. */
const keepAliveTimeoutMs = 65_000

/**
 * The listening server for an API layer; `onListen` learns the bound port (tests use port 0).
 * `middleware` wraps every response (a surface that answers in another shape, as `/v1/` does).
 */
export const serve = <E, R>(apiLayer: Layer.Layer<HttpApi.Api, E, R>, middleware?: AppMiddleware) =>
  Layer.unwrapEffect(
    Effect.gen(function*() {
      const config = yield* AppConfig
      // The request log is at debug level: below it, the middleware would only cost time.
      const logsRequests = config.logLevel === "debug" || config.logLevel === "trace"
      const server = new Server()
      // An idle keep-alive connection is closed by the client, not here: a client reusing one the
      // server was closing at that moment (Node's default 5 s, as long as undici's own) gets a reset
      // for a request that never arrived. Above the idle timeouts of clients and proxies (nginx 60 s).
      server.keepAliveTimeout = keepAliveTimeoutMs
      server.headersTimeout = keepAliveTimeoutMs + 1000
      const outer = middleware ?? ((app) => app)
      return HttpApiBuilder.serve((app) => (logsRequests ? requestLogger(outer(app)) : outer(app))).pipe(
        Layer.provide(gracefulShutdown(server)),
        Layer.provide(WebApp.layer()),
        Layer.provide(docsPage("/docs", () => import("@effect/platform/HttpApiSwagger"))),
        Layer.provide(docsPage("/redoc", () => import("@effect/platform/HttpApiScalar"))),
        Layer.provide(HttpApiBuilder.middlewareOpenApi({ path: "/openapi.json" })),
        Layer.provide(errorMapping),
        Layer.provide(requestGuard),
        HttpServer.withLogAddress,
        Layer.provideMerge(NodeHttpServer.layer(() => server, { port: config.port, host: config.host }))
      )
    })
  ).pipe(Layer.provide(apiLayer))
