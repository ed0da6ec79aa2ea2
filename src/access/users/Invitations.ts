/**
 * One-time links: an invitation (whoever opens it chooses a username and password and becomes a
 * user of the invitation's role) and a password reset (its user chooses a new password). The token
 * (`inv_` and 32 random bytes) is answered once, when the link is made; only its SHA-256 and a
 * short prefix are kept. A link is spent in the same transaction that creates the user or sets the
 * password, so it works once; it lapses at its expiry; an admin can withdraw it. Accepting is
 * public (the token is the credential) and guarded as sign-in is (`SignInGuard.ts`).
 *
 * Also the signed-in user's own password change: the current password first (a wrong one counts as
 * a failed sign-in), then every other session of theirs ends.
 */
import { SqlClient } from "@effect/sql"
import { Clock, Effect } from "effect"
import * as crypto from "node:crypto"
import type { PrincipalShape } from "../../auth/Principal.ts"
import { Forbidden, ValidationError } from "../../contract/Errors.ts"
import { transactions } from "../../db/Repository.ts"
import { traced } from "../../telemetry/Spans.ts"
import { InvitationNotFound, InvitationSpent, UserNotFound } from "./Errors.ts"
import { type InvitationRow, InvitationsRepo } from "./InvitationsRepo.ts"
import {
  type AcceptInvitation,
  type ChangePassword,
  CreatedInvitation,
  type CreateInvitation,
  InvitationOffer,
  InvitationView,
  type Role
} from "./Model.ts"
import { hashPassword, verifyPassword } from "./Password.ts"
import { UsersRepo } from "./Repo.ts"
import { SignInGuard } from "./SignInGuard.ts"
import { Users } from "./Users.ts"
import { requireAdmin, tokenHash } from "./Views.ts"

export const INVITATION_PREFIX = "inv_"
const hourMs = 3_600_000

const spent = new InvitationSpent({
  detail: "This link cannot be used: it was used already, it expired, or it was withdrawn. Ask for a new one."
})

const toView = (row: InvitationRow, now: number) =>
  new InvitationView({
    id: row.id,
    kind: row.user_id === null ? "invitation" : "password_reset",
    role: row.role,
    username_hint: row.username_hint,
    user_id: row.user_id,
    username: row.username,
    prefix: row.display_prefix,
    status: row.used_at ? "used" : row.expires_at.getTime() <= now ? "expired" : "pending",
    created_at: row.created_at,
    expires_at: row.expires_at,
    used_at: row.used_at
  })

export class Invitations extends Effect.Service<Invitations>()("cairn/Invitations", {
  effect: Effect.gen(function*() {
    const repo = yield* InvitationsRepo
    const usersRepo = yield* UsersRepo
    const users = yield* Users
    const guard = yield* SignInGuard
    const transaction = transactions(yield* SqlClient.SqlClient)

    const issueLink = (
      caller: PrincipalShape,
      link: { readonly role: Role; readonly usernameHint: string | null; readonly userId: string | null; readonly hours: number }
    ) =>
      Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        const token = INVITATION_PREFIX + crypto.randomBytes(32).toString("base64url")
        const id = crypto.randomUUID()
        yield* repo.insert({
          id,
          hash: tokenHash(token),
          prefix: token.slice(0, INVITATION_PREFIX.length + 6),
          role: link.role,
          usernameHint: link.usernameHint,
          userId: link.userId,
          createdBy: caller.kind === "user" ? caller.id : (caller.user ?? null),
          expiresAt: new Date(now + link.hours * hourMs)
        })
        const row = (yield* repo.byId(id))!
        return new CreatedInvitation({ ...toView(row, now), token, path: `/invite/${token}` })
      })

    const invite = (caller: PrincipalShape, input: CreateInvitation) =>
      Effect.gen(function*() {
        if (input.role === "admin") yield* requireAdmin(caller)
        return yield* issueLink(caller, {
          role: input.role,
          usernameHint: input.username_hint ?? null,
          userId: null,
          hours: input.expires_in_hours
        })
      })

    const resetLink = (caller: PrincipalShape, userId: string, hours: number) =>
      Effect.gen(function*() {
        const user = yield* usersRepo.byId(userId)
        if (!user) return yield* new UserNotFound({ detail: `User not found: ${userId}` })
        if (user.role === "admin") yield* requireAdmin(caller)
        return yield* issueLink(caller, { role: user.role, usernameHint: null, userId, hours })
      })

    const list = Effect.gen(function*() {
      const now = yield* Clock.currentTimeMillis
      return (yield* repo.list).map((row) => toView(row, now))
    })

    const withdraw = (id: string) =>
      Effect.flatMap(
        repo.remove(id),
        (removed) => removed ? Effect.void : Effect.fail(new InvitationNotFound({ detail: `Invitation not found: ${id}` }))
      )

    /** What an unspent link offers; 410 for any other token (unknown, used, expired). */
    const offer = (token: string) =>
      Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        const row = yield* repo.byHash(tokenHash(token))
        if (!row || row.used_at || row.expires_at.getTime() <= now) return yield* spent
        return new InvitationOffer({
          kind: row.user_id === null ? "invitation" : "password_reset",
          role: row.role,
          username_hint: row.username_hint,
          username: row.username,
          expires_at: row.expires_at
        })
      })

    const accept = (token: string, input: AcceptInvitation, address: string) =>
      guard.guard(
        address,
        Effect.gen(function*() {
          const passwordHash = yield* hashPassword(input.password)
          const now = new Date(yield* Clock.currentTimeMillis)
          const { user, reset } = yield* transaction(
            Effect.gen(function*() {
              const row = yield* repo.spend(tokenHash(token), now)
              if (!row) return yield* spent
              if (row.user_id === null) return { user: yield* newUser(row, input, passwordHash), reset: false }
              const updated = yield* usersRepo.update(row.user_id, { at: now, passwordHash })
              if (!updated) return yield* spent
              yield* repo.usedBy(row.id, updated.id)
              return { user: updated, reset: true }
            })
          )
          // A reset is for a password someone else may know: every session of the user ends.
          if (reset) yield* users.endSessions(user.id)
          return yield* users.issue(user)
        })
      )

    const newUser = (row: InvitationRow, input: AcceptInvitation, passwordHash: string) =>
      Effect.gen(function*() {
        const username = input.username
        if (username === undefined) return yield* ValidationError.single(["body", "username"], "Username is required")
        yield* usersRepo.lockUsers
        if (yield* usersRepo.byUsername(username)) {
          return yield* ValidationError.single(["body", "username"], "That username is taken; choose another")
        }
        const user = yield* usersRepo.insert({
          id: crypto.randomUUID(),
          username,
          email: null,
          displayName: null,
          passwordHash,
          role: row.role,
          oidcIssuer: null,
          oidcSubject: null
        })
        yield* repo.usedBy(row.id, user.id)
        return user
      })

    /** The signed-in user's own password: this sign-in continues with the tokens answered, every other one ends. */
    const changePassword = (caller: PrincipalShape, family: string | undefined, input: ChangePassword, address: string) =>
      Effect.gen(function*() {
        if (caller.kind !== "user") {
          return yield* new Forbidden({ detail: "Only a signed-in user has a password to change; sign in with your username" })
        }
        const user = yield* guard.guard(
          address,
          Effect.gen(function*() {
            const found = yield* usersRepo.byId(caller.id)
            const ok = yield* verifyPassword(input.current_password, found?.password_hash ?? null)
            if (!found || !ok) {
              return yield* ValidationError.single(["body", "current_password"], "Current password is not right")
            }
            return found
          })
        )
        const now = new Date(yield* Clock.currentTimeMillis)
        yield* usersRepo.update(user.id, { at: now, passwordHash: yield* hashPassword(input.new_password) })
        yield* users.endSessions(user.id, family ?? null)
        return yield* users.issue(user, family)
      })

    return traced("Invitations", { invite, resetLink, list, withdraw, offer, accept, changePassword } as const)
  }),
  dependencies: [InvitationsRepo.Default, UsersRepo.Default, Users.Default, SignInGuard.Default]
}) {}
