/**
 * Users and their sessions: first-admin setup, local login, access tokens (signed, one hour) and
 * refresh tokens (random, stored hashed, 30 days, rotated on every use; presenting a rotated token
 * again revokes its whole family), logout, and the admin operations on users.
 *
 * Access tokens carry the user's scopes and are checked without a lookup of their own; what they
 * cannot say (the user was disabled, deleted, changed role or ended their sessions since) is
 * checked by `UserGate.ts` on every request.
 */
import { SqlClient } from "@effect/sql"
import { Clock, Console, Effect, Option, Redacted } from "effect"
import * as crypto from "node:crypto"
import type { PrincipalShape } from "../../auth/Principal.ts"
import { AppConfig } from "../../config/AppConfig.ts"
import { Unauthorized } from "../../contract/Errors.ts"
import { transactions } from "../../db/Repository.ts"
import { ServerSecret } from "../../secrets/ServerSecret.ts"
import { traced } from "../../telemetry/Spans.ts"
import { safeEqual } from "../Authenticator.ts"
import { Tokens } from "../Tokens.ts"
import { UserConflict, UserNotFound } from "./Errors.ts"
import { AuthStatus, type CreateUser, Me, type SetupRequest, TokenPair, type UpdateUser } from "./Model.ts"
import { hashPassword, verifyPassword } from "./Password.ts"
import { type UserRow, UsersRepo } from "./Repo.ts"
import { localUrl, setupBanner } from "./SetupBanner.ts"
import { SignInGuard } from "./SignInGuard.ts"
import { UserGate } from "./UserGate.ts"
import { requireAdmin, scopesForRole, tokenHash as hash, toUserView } from "./Views.ts"

export const refreshTokenMs = 30 * 24 * 3_600_000

/** The first-admin setup code of a server without API_KEY: 20 characters derived from its secret. */
export const setupCodeOf = (secret: { readonly deriveKey: (purpose: string) => Buffer }) =>
  secret.deriveKey("setup-code").toString("base64url").slice(0, 20)

/**
 * The token of an `Authorization: Bearer <token>` header, read as the authentication middleware
 * reads it (everything after the scheme, so an operator's key of any shape matches); undefined for
 * any other header or none.
 */
export const bearerToken = (authorization: string | undefined): string | undefined => authorization?.match(/^Bearer (.+)$/is)?.[1]

const badLogin = new Unauthorized({ detail: "Invalid username or password" })
const badRefresh = new Unauthorized({ detail: "Invalid or expired refresh token" })
const disabledLogin = new Unauthorized({ detail: "This account is disabled. Ask an administrator to enable it." })

export interface OidcIdentity {
  readonly issuer: string
  readonly subject: string
  readonly email: string | null
  readonly emailVerified: boolean
  readonly name: string | null
  readonly preferredUsername: string | null
}

export class Users extends Effect.Service<Users>()("cairn/Users", {
  effect: Effect.gen(function*() {
    const repo = yield* UsersRepo
    const tokens = yield* Tokens
    const config = yield* AppConfig
    const transaction = transactions(yield* SqlClient.SqlClient)
    const guard = yield* SignInGuard
    const gate = yield* UserGate

    /**
     * Tokens for a user: a new sign-in (its last sign-in recorded), or with `familyId` the next
     * tokens of that one. A disabled user gets none.
     */
    const issue = (user: UserRow, familyId?: string) =>
      Effect.gen(function*() {
        if (user.disabled_at) return yield* disabledLogin
        const now = yield* Clock.currentTimeMillis
        if (familyId === undefined) yield* repo.signedIn(user.id, new Date(now))
        const family = familyId ?? crypto.randomUUID()
        const access = yield* tokens.sign("user", user.id, scopesForRole(user.role), config.accessTokenSeconds, {
          role: user.role,
          username: user.username,
          // The sign-in it belongs to: "sign out of this device" ends it by the access token alone.
          family,
          // To the millisecond: a token issued before its user's sessions ended is refused (UserGate).
          iat_ms: now
        })
        const refresh = "rt_" + crypto.randomBytes(32).toString("base64url")
        yield* repo.insertRefresh({
          id: crypto.randomUUID(),
          userId: user.id,
          familyId: family,
          hash: hash(refresh),
          expiresAt: new Date(now + refreshTokenMs)
        })
        return new TokenPair({
          access_token: access.token,
          token_type: "bearer",
          expires_in: access.expiresIn,
          expires_at: access.expiresAt,
          refresh_token: refresh,
          user: toUserView({ ...user, last_login_at: familyId === undefined ? new Date(now) : user.last_login_at })
        })
      })

    /**
     * Ends the user's sessions (all, or all but the sign-in `keep`): their refresh tokens are
     * revoked and the access tokens issued until now refused.
     */
    const endSessions = (userId: string, keep: string | null = null) =>
      Effect.gen(function*() {
        const at = new Date(yield* Clock.currentTimeMillis)
        yield* repo.revokeUserExcept(userId, keep, at)
        yield* repo.update(userId, { at, endTokens: true })
        yield* gate.changed(userId)
      })

    const staticKey = Option.map(config.apiKey, Redacted.value)
    // Without API_KEY the first admin is claimed with this code, printed to the log at start: a
    // server reachable from elsewhere is not handed to whoever finds it first. Derived from the
    // server secret, so every process sharing it accepts the same code.
    const setupCode = setupCodeOf(yield* ServerSecret)
    const setupCredential = Option.isSome(staticKey) ? "api_key" : "setup_code"

    if ((yield* repo.count) === 0 && Option.isNone(staticKey)) {
      yield* Effect.logWarning(
        `No admin exists yet. Create the first one with the setup code ${setupCode}: ` +
          `POST /auth/setup with Authorization: Bearer ${setupCode} (set API_KEY to use that instead).`
      )
      yield* Console.error(setupBanner(setupCode, localUrl(config.host, config.port)).trimEnd())
    }

    const status = Effect.map(repo.count, (n) =>
      new AuthStatus({
        setup_required: n === 0,
        setup_credential: setupCredential,
        local_login: true,
        oidc_enabled: Option.isSome(config.oidcIssuer)
      }))

    /**
     * Creates the first admin. The route is public so the UI can reach it, but an empty users table
     * must not hand admin to whoever reaches the port first: the caller shows API_KEY, or without
     * one the setup code the server printed to its log. `authorization` is the raw header.
     */
    const setup = (input: SetupRequest, authorization: string | undefined, address: string) =>
      Effect.gen(function*() {
        yield* guard.guard(address, checkSetupCredential(authorization))
        return yield* createFirstAdmin(input)
      })

    const checkSetupCredential = (authorization: string | undefined) =>
      Effect.gen(function*() {
        const expected = Option.getOrElse(staticKey, () => setupCode)
        const token = bearerToken(authorization)
        if (token === undefined || !safeEqual(token, expected)) {
          return yield* new Unauthorized({
            detail: Option.isSome(staticKey)
              ? "That is not the server's API key. Creating the first admin needs the API_KEY the server was started with (as the bearer token)."
              : "That setup code is not right. Use the code the server printed in a box on its standard error when it started (as the bearer token)."
          })
        }
      })

    const createFirstAdmin = (input: SetupRequest) =>
      Effect.gen(function*() {
        const passwordHash = yield* hashPassword(input.password)
        const user = yield* transaction(
          Effect.gen(function*() {
            yield* repo.lockUsers
            if ((yield* repo.count) > 0) return undefined
            return yield* repo.insert({
              id: crypto.randomUUID(),
              username: input.username,
              email: input.email ?? null,
              displayName: null,
              passwordHash,
              role: "admin",
              oidcIssuer: null,
              oidcSubject: null
            })
          })
        )
        if (!user) return yield* new UserConflict({ detail: "Setup is already complete: a user exists" })
        return yield* issue(user)
      })

    const login = (username: string, password: string, address: string) =>
      guard.guard(
        address,
        Effect.gen(function*() {
          const user = yield* repo.byUsername(username.trim())
          const ok = yield* verifyPassword(password, user?.password_hash ?? null)
          if (!user || !ok) return yield* badLogin
          return yield* issue(user)
        })
      )

    const refresh = (token: string) =>
      Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        const outcome = yield* transaction(
          Effect.gen(function*() {
            const row = yield* repo.refreshForUpdate(hash(token))
            if (!row || row.revoked_at) return { _tag: "invalid" } as const
            if (row.rotated_at) {
              // A used token came back: whoever holds the family is not to be trusted.
              yield* repo.revokeFamily(row.family_id, new Date(now))
              return { _tag: "reused" } as const
            }
            if (row.expires_at.getTime() <= now) return { _tag: "invalid" } as const
            const user = yield* repo.byId(row.user_id)
            if (!user || user.disabled_at) return { _tag: "invalid" } as const
            yield* repo.markRotated(row.id, new Date(now))
            return { _tag: "ok", pair: yield* issue(user, row.family_id) } as const
          })
        )
        if (outcome._tag === "reused") {
          yield* Effect.logWarning("A rotated refresh token was presented again; its session is revoked")
        }
        if (outcome._tag !== "ok") return yield* badRefresh
        return outcome.pair
      })

    /**
     * Ends the session of a refresh token (its whole family); unknown tokens are ignored. Without
     * one, a user access token ends the sign-in it was issued for (this device: the web app, whose
     * refresh cookie is not sent here). `everywhere` ends every session of the user, named by the
     * refresh token or by the access token (`authorization` is the raw header): 401 when neither names one.
     */
    const logout = (token: string | undefined, everywhere: boolean, authorization: string | undefined) =>
      Effect.gen(function*() {
        const now = new Date(yield* Clock.currentTimeMillis)
        const bearer = token === undefined && (everywhere || authorization !== undefined)
          ? yield* Effect.either(userOfBearer(authorization))
          : undefined
        if (everywhere && bearer?._tag === "Left") return yield* bearer.left
        const bearerUser = bearer?._tag === "Right" ? bearer.right : undefined
        const everyone = yield* transaction(
          Effect.gen(function*() {
            const row = token === undefined ? undefined : yield* repo.refreshForUpdate(hash(token))
            const userId = row?.user_id ?? bearerUser?.id
            if (everywhere && userId !== undefined) return userId
            if (row) yield* repo.revokeFamily(row.family_id, now)
            else if (bearerUser?.family) yield* repo.revokeFamily(bearerUser.family, now)
            return undefined
          })
        )
        // Everywhere: the access tokens already issued are refused too, not left to lapse.
        if (everyone !== undefined) yield* endSessions(everyone)
      })

    const userOfBearer = (authorization: string | undefined) =>
      Effect.gen(function*() {
        const bearer = bearerToken(authorization)
        const verified = bearer === undefined ? undefined : yield* Effect.option(tokens.verify(bearer))
        const found = verified === undefined ? undefined : Option.getOrUndefined(verified)
        const principal = found?.principal
        if (principal?.kind !== "user") {
          return yield* new Unauthorized({ detail: "Logging out everywhere needs a refresh token or a user's access token" })
        }
        const family = found?.claims.family
        return { id: principal.id, family: typeof family === "string" ? family : undefined }
      })

    /** The sign-in a user access token (the raw header) belongs to, when it names one. */
    const familyOf = (authorization: string | undefined) =>
      Effect.map(Effect.either(userOfBearer(authorization)), (found) => found._tag === "Right" ? found.right.family : undefined)

    const me = (principal: PrincipalShape) =>
      Effect.gen(function*() {
        if (principal.kind === "anonymous") return yield* new Unauthorized({ detail: "Not authenticated" })
        const user = principal.kind === "user" ? yield* repo.byId(principal.id) : undefined
        if (principal.kind === "user" && !user) return yield* new Unauthorized({ detail: "User no longer exists" })
        return new Me({
          kind: principal.kind,
          id: principal.id,
          scopes: [...principal.scopes].sort(),
          user: user ? toUserView(user) : null
        })
      })

    const list = Effect.map(repo.list, (rows) => rows.map(toUserView))

    const create = (caller: PrincipalShape, input: CreateUser) =>
      Effect.gen(function*() {
        if (input.role === "admin") yield* requireAdmin(caller)
        if (yield* repo.byUsername(input.username)) {
          return yield* new UserConflict({ detail: `Username already taken: ${input.username}` })
        }
        const row = yield* repo.insert({
          id: crypto.randomUUID(),
          username: input.username,
          email: input.email ?? null,
          displayName: input.display_name ?? null,
          passwordHash: yield* hashPassword(input.password),
          role: input.role,
          oidcIssuer: null,
          oidcSubject: null
        })
        return toUserView(row)
      })

    // The target row is locked while the caller's right over it is checked, so a concurrent
    // promotion cannot slip an admin past a `users:write` caller. A new password or a disable ends
    // the user's sessions; a role change refuses the access tokens issued with the old role's
    // scopes (the web app refreshes into the new ones).
    const update = (caller: PrincipalShape, id: string, changes: UpdateUser) =>
      Effect.gen(function*() {
        if (changes.disabled === true && caller.kind === "user" && caller.id === id) {
          return yield* new UserConflict({ detail: "You cannot disable your own account" })
        }
        const passwordHash = changes.password ? yield* hashPassword(changes.password) : undefined
        const at = new Date(yield* Clock.currentTimeMillis)
        const ending = passwordHash !== undefined || changes.disabled === true
        const view = yield* transaction(
          Effect.gen(function*() {
            const target = yield* repo.byIdForUpdate(id)
            if (!target) return yield* new UserNotFound({ detail: `User not found: ${id}` })
            if (target.role === "admin" || changes.role === "admin") yield* requireAdmin(caller)
            const row = yield* repo.update(id, {
              at,
              ...(changes.role ? { role: changes.role } : {}),
              ...(passwordHash ? { passwordHash } : {}),
              ...(changes.disabled !== undefined ? { disabled: changes.disabled } : {}),
              endTokens: ending || (changes.role !== undefined && changes.role !== target.role)
            })
            if (!row) return yield* new UserNotFound({ detail: `User not found: ${id}` })
            if (ending) yield* repo.revokeUser(id, at)
            return toUserView(row)
          })
        )
        yield* gate.changed(id)
        return view
      })

    // The keys the user made are revoked with them: the delete leaves a key ownerless, and an
    // ownerless key would otherwise go on working as if the static key had made it.
    const remove = (caller: PrincipalShape, id: string) =>
      transaction(
        Effect.gen(function*() {
          const target = yield* repo.byIdForUpdate(id)
          if (!target) return yield* new UserNotFound({ detail: `User not found: ${id}` })
          if (target.role === "admin") yield* requireAdmin(caller)
          yield* repo.revokeKeysOf(id, new Date(yield* Clock.currentTimeMillis))
          yield* repo.remove(id)
        })
      ).pipe(Effect.zipLeft(gate.changed(id)))

    /**
     * The user of an OpenID identity: the one linked to it; else a local user with the same
     * verified e-mail, linked now; else a new member (the first user of the server is an admin).
     */
    const fromOidc = (identity: OidcIdentity) =>
      Effect.gen(function*() {
        const user = yield* transaction(
          Effect.gen(function*() {
            yield* repo.lockUsers
            const linked = yield* repo.byOidc(identity.issuer, identity.subject)
            if (linked) return linked
            if (identity.email && identity.emailVerified) {
              const byEmail = yield* repo.byVerifiedEmail(identity.email)
              if (byEmail) return yield* repo.linkOidc(byEmail.id, identity.issuer, identity.subject)
            }
            const base = (identity.preferredUsername ?? identity.email ?? `user-${identity.subject}`).slice(0, 80)
            let username = base
            for (let n = 2; yield* repo.byUsername(username); n++) username = `${base}-${n}`
            const first = (yield* repo.count) === 0
            return yield* repo.insert({
              id: crypto.randomUUID(),
              username,
              email: identity.email,
              displayName: identity.name,
              passwordHash: null,
              role: first ? "admin" : "member",
              oidcIssuer: identity.issuer,
              oidcSubject: identity.subject
            })
          })
        )
        return yield* issue(user)
      })

    return traced(
      "Users",
      { status, setup, login, refresh, logout, familyOf, me, list, create, update, remove, fromOidc, issue, endSessions } as const
    )
  }),
  dependencies: [SignInGuard.Default, UsersRepo.Default, Tokens.Default, UserGate.Default]
}) {}
