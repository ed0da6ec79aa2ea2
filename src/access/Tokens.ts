/**
 * Signed bearer tokens (JWT, HS256): widget tokens and user access tokens. Each kind is signed with
 * its own key derived from the server secret, and carries its scopes, so a request with one needs no
 * database lookup. Times come from Effect's `Clock`, so tests can move time.
 */
import { Clock, Effect, Schema } from "effect"
import * as jose from "jose"
import * as crypto from "node:crypto"
import type { PrincipalShape } from "../auth/Principal.ts"
import { expandScopes, HeldScopes, type Scope } from "../auth/Scopes.ts"
import { Unauthorized } from "../contract/Errors.ts"
import { ServerSecret } from "../secrets/ServerSecret.ts"
import { traced } from "../telemetry/Spans.ts"

export type TokenKind = "widget" | "user"

const ISSUER = "cairn"
const invalid = new Unauthorized({ detail: "Invalid or expired credentials" })

const decodeScopes = Schema.decodeUnknown(HeldScopes)

/** Three dot-separated base64url segments: the shape of a compact JWT. */
export const looksLikeJwt = (token: string): boolean => /^[\w-]+\.[\w-]+\.[\w-]+$/.test(token)

export interface SignedToken {
  readonly token: string
  readonly expiresAt: Date
  readonly expiresIn: number
}

export interface VerifiedToken {
  readonly principal: PrincipalShape
  readonly claims: jose.JWTPayload
}

export class Tokens extends Effect.Service<Tokens>()("cairn/Tokens", {
  effect: Effect.gen(function*() {
    const secret = yield* ServerSecret
    const keys: Record<TokenKind, Uint8Array> = {
      widget: new Uint8Array(secret.deriveKey("jwt:widget")),
      user: new Uint8Array(secret.deriveKey("jwt:user"))
    }

    /** A token of `kind` for `subject`, carrying `scopes` and any extra claims, valid `lifetimeSeconds`. */
    const sign = (
      kind: TokenKind,
      subject: string,
      scopes: ReadonlyArray<Scope>,
      lifetimeSeconds: number,
      extra: Record<string, unknown> = {}
    ): Effect.Effect<SignedToken> =>
      Effect.gen(function*() {
        const now = Math.floor((yield* Clock.currentTimeMillis) / 1000)
        const exp = now + lifetimeSeconds
        const token = yield* Effect.promise(() =>
          new jose.SignJWT({ ...extra, kind, scopes: [...scopes] })
            .setProtectedHeader({ alg: "HS256", typ: "JWT" })
            .setIssuer(ISSUER)
            .setAudience(`cairn:${kind}`)
            .setSubject(subject)
            .setIssuedAt(now)
            .setExpirationTime(exp)
            .setJti(crypto.randomUUID())
            .sign(keys[kind])
        )
        return { token, expiresAt: new Date(exp * 1000), expiresIn: lifetimeSeconds }
      })

    // Tokens verified before, until their expiry: a widget sends the same token for up to 15
    // minutes, so its signature is checked once per process, not on every request.
    const verified = new Map<string, VerifiedToken & { readonly expMs: number }>()
    const maxCached = 10_000

    /** The principal of a token; 401 when it is malformed, tampered with, of an unknown kind or expired. */
    const verify = (token: string): Effect.Effect<VerifiedToken, Unauthorized> =>
      Effect.flatMap(Clock.currentTimeMillis, (now) => {
        const hit = verified.get(token)
        if (hit) {
          if (now < hit.expMs) return Effect.succeed(hit)
          verified.delete(token)
          return Effect.fail(invalid)
        }
        return Effect.tap(verifySignature(token, now), (result) => {
          if (verified.size >= maxCached) verified.clear()
          verified.set(token, { ...result, expMs: (result.claims.exp ?? 0) * 1000 })
        })
      })

    const verifySignature = (token: string, now: number): Effect.Effect<VerifiedToken, Unauthorized> =>
      Effect.gen(function*() {
        let kind: unknown
        try {
          kind = jose.decodeJwt(token).kind
        } catch {
          return yield* invalid
        }
        if (kind !== "widget" && kind !== "user") return yield* invalid
        const { payload } = yield* Effect.tryPromise({
          try: () =>
            jose.jwtVerify(token, keys[kind], {
              algorithms: ["HS256"],
              issuer: ISSUER,
              audience: `cairn:${kind}`,
              currentDate: new Date(now),
              clockTolerance: 0,
              requiredClaims: ["exp", "iat", "sub"]
            }),
          catch: () => invalid
        })
        if (payload.kind !== kind || typeof payload.sub !== "string" || !Array.isArray(payload.scopes)) {
          return yield* invalid
        }
        // Names this release does not declare are dropped: they grant nothing.
        const scopes = yield* Effect.mapError(decodeScopes(payload.scopes), () => invalid)
        const tokenId = typeof payload.jti === "string" && payload.jti.length > 0 ? payload.jti : undefined
        // A widget's sessions belong to its identity (`wid`), which its re-mints keep.
        const widgetId = kind === "widget" ? (typeof payload.wid === "string" && payload.wid ? payload.wid : tokenId) : undefined
        return {
          principal: {
            kind,
            id: payload.sub,
            scopes: expandScopes(scopes),
            ...(tokenId ? { tokenId } : {}),
            ...(widgetId ? { owner: `widget:${widgetId}` } : {})
          },
          claims: payload
        }
      })

    return traced("Tokens", { sign, verify } as const)
  })
}) {}
