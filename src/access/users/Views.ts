/** What the user services share: a user as the API shows it, a role's scopes, the admin rule, the token hash. */
import { Effect } from "effect"
import * as crypto from "node:crypto"
import type { PrincipalShape } from "../../auth/Principal.ts"
import { grants, memberScopes, type Scope } from "../../auth/Scopes.ts"
import { Forbidden } from "../../contract/Errors.ts"
import { type Role, UserView } from "./Model.ts"
import type { UserRow } from "./Repo.ts"

export const scopesForRole = (role: Role): ReadonlyArray<Scope> => (role === "admin" ? ["admin"] : memberScopes)

/** A random token's SHA-256 (refresh tokens, one-time links): 32 random bytes need no slow hash. */
export const tokenHash = (value: string) => crypto.createHash("sha256").update(value).digest("base64url")

export const toUserView = (row: UserRow) =>
  new UserView({
    id: row.id,
    username: row.username,
    email: row.email,
    display_name: row.display_name,
    role: row.role,
    login: [...(row.password_hash ? (["password"] as const) : []), ...(row.oidc_subject ? (["oidc"] as const) : [])],
    disabled: row.disabled_at !== null,
    last_login_at: row.last_login_at,
    created_at: row.created_at
  })

/**
 * `users:write` manages members; anything that makes, unmakes or takes over an admin (creating,
 * inviting or promoting one, demoting, disabling, deleting or re-passwording one) needs `admin`
 * itself, or `users:write` would be a path to full access.
 */
export const requireAdmin = (caller: PrincipalShape) =>
  grants(caller.scopes, "admin") ? Effect.void : Effect.fail(new Forbidden({ detail: "Missing required scope: admin" }))
