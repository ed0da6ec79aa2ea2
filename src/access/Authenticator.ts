/**
 * Turns a bearer token into a principal. The token's shape tells the kind apart: `ask_...` is a
 * scoped key (looked up through the key cache), three dot-separated segments a signed token (widget
 * or user, verified without a lookup), anything else is compared with the static key in constant
 * time (checked first, so an operator's key of any shape works).
 */
import { Context, Effect, Layer, Option, Redacted } from "effect"
import * as crypto from "node:crypto"
import type { PrincipalShape } from "../auth/Principal.ts"
import type { Scope } from "../auth/Scopes.ts"
import { AppConfig } from "../config/AppConfig.ts"
import { Unauthorized } from "../contract/Errors.ts"
import { ApiKeys, KEY_PREFIX } from "./keys/ApiKeys.ts"
import { looksLikeJwt, Tokens } from "./Tokens.ts"
import { issuedAtMs, UserGate } from "./users/UserGate.ts"

export class Authenticator extends Context.Tag("cairn/Authenticator")<
  Authenticator,
  { readonly authenticate: (token: string) => Effect.Effect<PrincipalShape, Unauthorized> }
>() {}

const digest = (value: string) => crypto.createHash("sha256").update(value).digest()

/** Constant-time equality that does not leak the length through an early exit. */
export const safeEqual = (a: string, b: string): boolean => crypto.timingSafeEqual(digest(a), digest(b))

const staticPrincipal: PrincipalShape = { kind: "static_key", id: "", scopes: new Set<Scope>(["admin"]) }

export const invalid = new Unauthorized({ detail: "Invalid or expired credentials" })

export const layer = Layer.effect(
  Authenticator,
  Effect.gen(function*() {
    const config = yield* AppConfig
    const keys = yield* ApiKeys
    const tokens = yield* Tokens
    const gate = yield* UserGate
    // Compared by digest, in constant time; the key's own digest is taken once.
    const staticDigest = Option.getOrUndefined(Option.map(config.apiKey, (key) => digest(Redacted.value(key))))
    return {
      authenticate: (token) => {
        // The static key first: whatever shape an operator gave it, it always works.
        if (staticDigest !== undefined && crypto.timingSafeEqual(digest(token), staticDigest)) return Effect.succeed(staticPrincipal)
        // A disabled user's keys and tokens are refused; a user token issued before its user's
        // sessions ended too (users/UserGate.ts).
        if (token.startsWith(KEY_PREFIX)) {
          return Effect.tap(keys.authenticate(token), (principal) => principal.user ? gate.admit(principal.user, undefined) : Effect.void)
        }
        if (looksLikeJwt(token)) {
          return Effect.flatMap(
            tokens.verify(token),
            ({ claims, principal }) =>
              principal.kind === "user" ? Effect.as(gate.admit(principal.id, issuedAtMs(claims)), principal) : Effect.succeed(principal)
          )
        }
        return Effect.fail(invalid)
      }
    }
  })
).pipe(Layer.provide(Layer.mergeAll(ApiKeys.Default, Tokens.Default, UserGate.Default)))
