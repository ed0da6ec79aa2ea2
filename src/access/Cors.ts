/**
 * CORS for the browser origins in CORS_ORIGINS. An allowed origin gets the CORS headers on every
 * answer and its preflights are answered; any other origin gets no CORS headers at all (the
 * platform's `cors` would echo a single configured origin to everyone). Without CORS_ORIGINS nothing
 * is added and preflights fall through to the router.
 */
import { HttpApiBuilder, HttpApp, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect, Layer } from "effect"
import { AppConfig } from "../config/AppConfig.ts"

const allowedMethods = "GET, HEAD, PUT, PATCH, POST, DELETE"
const exposedHeaders = "Retry-After"
const preflightMaxAge = "600"

export const layer = Layer.unwrapEffect(
  Effect.gen(function*() {
    const { corsOrigins } = yield* AppConfig
    if (corsOrigins.length === 0) return Layer.empty
    const allowed = new Set(corsOrigins)
    return HttpApiBuilder.middleware((app) =>
      Effect.gen(function*() {
        const request = yield* HttpServerRequest.HttpServerRequest
        const origin = request.headers["origin"]
        if (origin === undefined || !allowed.has(origin)) return yield* app
        const common = { "access-control-allow-origin": origin, vary: "Origin" }
        if (request.method === "OPTIONS" && request.headers["access-control-request-method"] !== undefined) {
          return HttpServerResponse.empty({
            status: 204,
            headers: {
              ...common,
              "access-control-allow-methods": allowedMethods,
              "access-control-allow-headers": request.headers["access-control-request-headers"] ?? "authorization, content-type",
              "access-control-max-age": preflightMaxAge
            }
          })
        }
        yield* HttpApp.appendPreResponseHandler((_request, response) =>
          Effect.succeed(
            HttpServerResponse.setHeaders(response, { ...common, "access-control-expose-headers": exposedHeaders })
          )
        )
        return yield* app
      })
    )
  })
)
