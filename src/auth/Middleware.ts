/**
 * The one security middleware: finds the route's required scope in the endpoint catalogue,
 * resolves the bearer token to a principal and checks the scope. Identity and scope live together
 * here because one HttpApi middleware cannot see what another provides.
 */
import { HttpApiMiddleware, HttpApiSecurity, HttpRouter } from "@effect/platform"
import { Effect, Layer, Redacted, Schema } from "effect"
import { EndpointCatalogue } from "../http/Catalogue.ts"
import { ErrorResponses, Forbidden, Unauthorized } from "../http/Errors.ts"
import { Authenticator } from "./Authenticator.ts"
import { anonymous, Principal } from "./Principal.ts"
import { grants, PUBLIC } from "./Scopes.ts"

export class Authentication extends HttpApiMiddleware.Tag<Authentication>()("cairn/Authentication", {
  failure: Schema.Union(ErrorResponses.unauthorized, ErrorResponses.forbidden),
  provides: Principal,
  security: { bearer: HttpApiSecurity.bearer }
}) {}

export const layer = Layer.effect(
  Authentication,
  Effect.gen(function* () {
    const catalogue = yield* EndpointCatalogue
    const authenticator = yield* Authenticator
    return {
      bearer: (token) =>
        Effect.gen(function* () {
          const route = yield* HttpRouter.RouteContext
          const entry = catalogue.lookup(route.route.method, route.route.path)
          // Routes outside the catalogue cannot reach this middleware; fail closed all the same.
          const required = entry?.scope ?? "admin"
          if (required === PUBLIC) return anonymous
          const value = Redacted.value(token)
          if (value.length === 0) return yield* new Unauthorized({ detail: "Not authenticated" })
          const principal = yield* authenticator.authenticate(value)
          if (!grants(principal.scopes, required)) {
            return yield* new Forbidden({ detail: `Missing required scope: ${required}` })
          }
          return principal
        })
    }
  })
)
