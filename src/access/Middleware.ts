/**
 * The one security middleware: finds the route's required scope in the endpoint catalogue,
 * resolves the bearer token to a principal, counts the request against the rate limit and checks
 * the scope. Identity, rate limit and scope live together here because one HttpApi middleware
 * cannot see what another provides.
 */
import { HttpApp, HttpRouter, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Context, Effect, Layer, Redacted } from "effect"
import { Authentication } from "../auth/Authentication.ts"
import { EndpointCatalogue } from "../auth/Catalogue.ts"
import { anonymous, type PrincipalShape } from "../auth/Principal.ts"
import { AUTHENTICATED, deprecationDate, grantedAsDeprecated, grants, PUBLIC } from "../auth/Scopes.ts"
import { Forbidden, type TooManyRequests, Unauthorized } from "../contract/Errors.ts"
import { Authenticator } from "./Authenticator.ts"
import { ClientAddress } from "./ClientAddress.ts"
import { RateLimiter } from "./RateLimit.ts"

/**
 * Whose bucket a request counts against: the credential's subject. Widget tokens name the bot, which
 * every visitor of that bot's widget shares, so they count per token (`jti`), else per client address.
 */
export const rateSubject = (principal: PrincipalShape, address: string): string => {
  if (principal.kind === "static_key") return "static"
  if (principal.kind === "widget") return principal.tokenId ? `widget-token:${principal.tokenId}` : `widget-ip:${address}`
  return `${principal.kind}:${principal.id}`
}

/**
 * An answer given under a deprecated scope says so (RFC 9745 `Deprecation`, with a `Link` to the
 * documentation), so a client's maintainer notices before the scope goes.
 */
const markDeprecated = HttpApp.appendPreResponseHandler((_request, response) =>
  Effect.succeed(
    HttpServerResponse.setHeaders(response, {
      deprecation: `@${Math.floor(deprecationDate.getTime() / 1000)}`,
      link: "</docs/api.md#deprecated-scopes>; rel=\"deprecation\""
    })
  )
)

/**
 * The whole check for one request: the route's scope from the catalogue, the bearer token to a
 * principal, the rate limit, the scope.
 */
export const makeAuthorize = Effect.gen(function*() {
  const catalogue = yield* EndpointCatalogue
  const authenticator = yield* Authenticator
  const limiter = yield* RateLimiter
  return (
    method: string,
    routePath: string,
    token: string,
    address: string
  ): Effect.Effect<PrincipalShape, Unauthorized | Forbidden | TooManyRequests> => {
    const entry = catalogue.lookup(method, routePath)
    // Routes outside the catalogue cannot reach this; fail closed all the same.
    const required = entry?.scope ?? "admin"
    const byAddress = () => limiter.check(`ip:${address}`, entry)
    if (required === PUBLIC) return Effect.as(byAddress(), anonymous)
    if (token.length === 0) return Effect.zipRight(byAddress(), Effect.fail(new Unauthorized({ detail: "Not authenticated" })))
    // Failed attempts count against the client address, so guessing is limited too.
    return authenticator.authenticate(token).pipe(
      Effect.tapError(byAddress),
      Effect.flatMap((principal) =>
        Effect.zipRight(
          limiter.check(rateSubject(principal, address), entry),
          required === AUTHENTICATED
            ? Effect.succeed(principal)
            : !grants(principal.scopes, required)
            ? Effect.fail(new Forbidden({ detail: `Missing required scope: ${required}` }))
            : grantedAsDeprecated(principal.scopes, required)
            ? Effect.as(markDeprecated, principal)
            : Effect.succeed(principal)
        )
      )
    )
  }
})

export const layer = Layer.effect(
  Authentication,
  Effect.map(Effect.all([makeAuthorize, ClientAddress]), ([authorize, clientAddress]) => ({
    // Every request passes here: the route and request are read from the fiber's context directly.
    bearer: (token) =>
      Effect.withFiberRuntime<PrincipalShape, Unauthorized | Forbidden | TooManyRequests>((fiber) => {
        const route = Context.unsafeGet(fiber.currentContext, HttpRouter.RouteContext)
        const request = Context.unsafeGet(fiber.currentContext, HttpServerRequest.HttpServerRequest)
        return authorize(route.route.method, route.route.path, Redacted.value(token), clientAddress.of(request))
      })
  }))
)
