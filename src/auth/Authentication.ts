/**
 * The API's one security declaration: a bearer token that resolves to a `Principal`. This is the
 * middleware *tag* only, part of the contract the typed client imports; how a token is checked
 * (authenticator, rate limit, scope) is `access/Middleware.ts`.
 */
import { HttpApiMiddleware, HttpApiSecurity } from "@effect/platform"
import { Schema } from "effect"
import { ErrorResponses } from "../contract/Errors.ts"
import { Principal } from "./Principal.ts"

export class Authentication extends HttpApiMiddleware.Tag<Authentication>()("cairn/Authentication", {
  failure: Schema.Union(ErrorResponses.unauthorized, ErrorResponses.forbidden, ErrorResponses.tooManyRequests),
  provides: Principal,
  security: { bearer: HttpApiSecurity.bearer }
}) {}
