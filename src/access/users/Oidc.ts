/**
 * OpenID Connect login (authorization code flow with PKCE S256, state and nonce) against the
 * provider named by OIDC_ISSUER. `start` records the attempt in the database (any server process
 * may receive the callback) and answers the provider's authorization URL; `callback` takes the
 * attempt (single use, ten minutes), exchanges the code, verifies the ID token against the
 * provider's JWKS (issuer, audience, expiry, nonce) and signs the user in.
 */
import { Clock, Effect, Option, Redacted } from "effect"
import * as jose from "jose"
import * as crypto from "node:crypto"
import { AppConfig } from "../../config/AppConfig.ts"
import { Unauthorized } from "../../contract/Errors.ts"
interface OidcCallbackParams {
  readonly code?: string | undefined
  readonly state?: string | undefined
  readonly error?: string | undefined
  readonly error_description?: string | undefined
}
import { traced } from "../../telemetry/Spans.ts"
import { IdentityProviderFailed, UserNotFound } from "./Errors.ts"
import { UsersRepo } from "./Repo.ts"
import { Users } from "./Users.ts"

export const loginAttemptMs = 10 * 60_000

interface ProviderMetadata {
  readonly issuer: string
  readonly authorization_endpoint: string
  readonly token_endpoint: string
  readonly jwks_uri: string
  readonly userinfo_endpoint?: string
}

const randomToken = () => crypto.randomBytes(32).toString("base64url")

export class Oidc extends Effect.Service<Oidc>()("cairn/Oidc", {
  effect: Effect.gen(function*() {
    const config = yield* AppConfig
    const repo = yield* UsersRepo
    const users = yield* Users
    const settings = Option.all({
      issuer: config.oidcIssuer,
      clientId: config.oidcClientId,
      clientSecret: config.oidcClientSecret,
      redirectUri: config.oidcRedirectUri
    })
    const notConfigured = new UserNotFound({
      detail: "OpenID login is not configured (OIDC_ISSUER, OIDC_CLIENT_ID, OIDC_CLIENT_SECRET, OIDC_REDIRECT_URI)"
    })

    // Discovery document and key set, fetched once and kept (a failed fetch is retried next time).
    let metadata: ProviderMetadata | undefined
    let jwks: ReturnType<typeof jose.createRemoteJWKSet> | undefined

    const discover = (issuer: string) =>
      Effect.gen(function*() {
        if (metadata) return metadata
        const url = `${issuer.replace(/\/$/, "")}/.well-known/openid-configuration`
        const document = yield* Effect.tryPromise({
          try: async () => {
            const response = await fetch(url, { signal: AbortSignal.timeout(10_000) })
            if (!response.ok) throw new Error(`HTTP ${response.status}`)
            return (await response.json()) as ProviderMetadata
          },
          catch: (cause) => new IdentityProviderFailed({ detail: `OpenID provider discovery failed: ${String(cause)}` })
        })
        if (document.issuer !== issuer) {
          return yield* new IdentityProviderFailed({ detail: "OpenID provider discovery names a different issuer" })
        }
        metadata = document
        jwks = jose.createRemoteJWKSet(new URL(document.jwks_uri))
        return document
      })

    /** The userinfo claims; ignored (empty) unless they are about the same subject. */
    const userinfo = (endpoint: string, accessToken: string, subject: string) =>
      Effect.tryPromise({
        try: async () => {
          const response = await fetch(endpoint, {
            headers: { authorization: `Bearer ${accessToken}` },
            signal: AbortSignal.timeout(10_000)
          })
          if (!response.ok) throw new Error(`HTTP ${response.status}`)
          return (await response.json()) as Record<string, unknown>
        },
        catch: (cause) => new IdentityProviderFailed({ detail: `OpenID userinfo failed: ${String(cause)}` })
      }).pipe(Effect.map((claims) => (claims.sub === subject ? claims : {})))

    /** The provider's authorization URL for a new login attempt. */
    const start = Effect.gen(function*() {
      if (Option.isNone(settings)) return yield* notConfigured
      const { issuer, clientId, redirectUri } = settings.value
      const provider = yield* discover(issuer)
      const state = randomToken()
      const nonce = randomToken()
      const verifier = randomToken()
      const challenge = crypto.createHash("sha256").update(verifier).digest("base64url")
      const now = yield* Clock.currentTimeMillis
      yield* repo.insertOidcLogin({ state, code_verifier: verifier, nonce, expires_at: new Date(now + loginAttemptMs) })
      const url = new URL(provider.authorization_endpoint)
      url.search = new URLSearchParams({
        response_type: "code",
        client_id: clientId,
        redirect_uri: redirectUri,
        scope: "openid email profile",
        state,
        nonce,
        code_challenge: challenge,
        code_challenge_method: "S256"
      }).toString()
      return url.toString()
    })

    const callback = (params: OidcCallbackParams) =>
      Effect.gen(function*() {
        if (Option.isNone(settings)) return yield* notConfigured
        const { issuer, clientId, clientSecret, redirectUri } = settings.value
        if (params.error) {
          return yield* new Unauthorized({ detail: `OpenID login refused: ${params.error_description ?? params.error}` })
        }
        if (!params.code || !params.state) {
          return yield* new Unauthorized({ detail: "OpenID callback without code or state" })
        }
        const now = yield* Clock.currentTimeMillis
        const attempt = yield* repo.takeOidcLogin(params.state, new Date(now))
        if (!attempt || attempt.expires_at.getTime() <= now) {
          return yield* new Unauthorized({ detail: "Unknown or expired OpenID login state" })
        }
        const provider = yield* discover(issuer)
        const basic = Buffer.from(
          `${encodeURIComponent(clientId)}:${encodeURIComponent(Redacted.value(clientSecret))}`
        ).toString("base64")
        const tokenResponse = yield* Effect.tryPromise({
          try: async () => {
            const response = await fetch(provider.token_endpoint, {
              method: "POST",
              headers: { authorization: `Basic ${basic}`, "content-type": "application/x-www-form-urlencoded" },
              body: new URLSearchParams({
                grant_type: "authorization_code",
                code: params.code!,
                redirect_uri: redirectUri,
                code_verifier: attempt.code_verifier
              }),
              signal: AbortSignal.timeout(10_000)
            })
            return { status: response.status, body: (await response.json().catch(() => ({}))) as Record<string, unknown> }
          },
          catch: (cause) => new IdentityProviderFailed({ detail: `OpenID token endpoint unreachable: ${String(cause)}` })
        })
        if (tokenResponse.status !== 200 || typeof tokenResponse.body.id_token !== "string") {
          // The provider refused the code (expired, replayed, wrong verifier): the login fails.
          return yield* new Unauthorized({
            detail: `OpenID code exchange failed: ${String(tokenResponse.body.error ?? `HTTP ${tokenResponse.status}`)}`
          })
        }
        const { payload } = yield* Effect.tryPromise({
          try: () =>
            jose.jwtVerify(tokenResponse.body.id_token as string, jwks!, {
              issuer,
              audience: clientId,
              currentDate: new Date(now)
            }),
          catch: (cause) => new Unauthorized({ detail: `OpenID ID token rejected: ${String(cause)}` })
        })
        if (payload.nonce !== attempt.nonce) return yield* new Unauthorized({ detail: "OpenID ID token nonce mismatch" })
        if (typeof payload.sub !== "string") return yield* new Unauthorized({ detail: "OpenID ID token without subject" })
        // Providers that follow the spec strictly put profile claims in userinfo, not the ID token.
        const accessToken = tokenResponse.body.access_token
        const profile: Record<string, unknown> =
          payload.email === undefined && provider.userinfo_endpoint && typeof accessToken === "string"
            ? yield* userinfo(provider.userinfo_endpoint, accessToken, payload.sub)
            : payload
        const text = (value: unknown) => (typeof value === "string" && value.length > 0 ? value : null)
        return yield* users.fromOidc({
          issuer,
          subject: payload.sub,
          email: text(profile.email),
          emailVerified: profile.email_verified === true,
          name: text(profile.name),
          preferredUsername: text(profile.preferred_username)
        })
      })

    return traced("Oidc", { start, callback } as const)
  }),
  dependencies: [UsersRepo.Default, Users.Default]
}) {}
