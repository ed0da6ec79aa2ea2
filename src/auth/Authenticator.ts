/**
 * Turns a bearer token into a principal. The token's shape tells the kind apart: the static key is
 * compared in constant time; other kinds are resolved by their own services.
 */
import { Context, Effect, Layer, Option, Redacted } from "effect"
import * as crypto from "node:crypto"
import { AppConfig } from "../config/AppConfig.ts"
import { Unauthorized } from "../http/Errors.ts"
import type { PrincipalShape } from "./Principal.ts"

export class Authenticator extends Context.Tag("cairn/Authenticator")<
  Authenticator,
  { readonly authenticate: (token: string) => Effect.Effect<PrincipalShape, Unauthorized> }
>() {}

/** Constant-time equality that does not leak the length through an early exit. */
export const safeEqual = (a: string, b: string): boolean => {
  const ha = crypto.createHash("sha256").update(a).digest()
  const hb = crypto.createHash("sha256").update(b).digest()
  return crypto.timingSafeEqual(ha, hb)
}

const staticPrincipal: PrincipalShape = { kind: "static_key", id: "", scopes: new Set(["admin"]) }

export const invalid = new Unauthorized({ detail: "Invalid or expired credentials" })

export const layer = Layer.effect(
  Authenticator,
  Effect.gen(function* () {
    const config = yield* AppConfig
    const staticKey = Option.map(config.apiKey, Redacted.value)
    return {
      authenticate: (token) =>
        Option.isSome(staticKey) && safeEqual(token, staticKey.value)
          ? Effect.succeed(staticPrincipal)
          : Effect.fail(invalid)
    }
  })
)
