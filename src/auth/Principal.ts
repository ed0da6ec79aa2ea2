/** Who is calling: resolved once per request by the authentication middleware. */
import { Context } from "effect"
import type { Scope } from "./Scopes.ts"

export type PrincipalKind = "anonymous" | "static_key" | "scoped_key" | "widget" | "user"

export interface PrincipalShape {
  readonly kind: PrincipalKind
  /** Key id, user id or bot id; empty for anonymous and the static key. */
  readonly id: string
  /** Scopes with implications applied; `admin` grants everything. */
  readonly scopes: ReadonlySet<Scope>
  /** The `jti` of a signed token (widget or user), when it carries one. */
  readonly tokenId?: string
  /**
   * Whose sessions these are, when it is not `kind:id`: a widget token's identity, which outlives
   * its re-mints (see sessions/Access.ts).
   */
  readonly owner?: string
  /** The user who made this API key (`owner_user_id`), when a signed-in user did: the lane its provider calls wait in. */
  readonly user?: string
}

export class Principal extends Context.Tag("cairn/Principal")<Principal, PrincipalShape>() {}

export const anonymous: PrincipalShape = { kind: "anonymous", id: "", scopes: new Set() }
