/**
 * What a user's signed access token cannot say: that its user was disabled, deleted, or ended their
 * sessions since it was issued. Every request with a user token (and with an API key a user made)
 * asks here: a disabled or deleted user is refused, and a token issued before the user's
 * `tokens_valid_after` (a password change, a disable, a role change, "sign out everywhere") too.
 *
 * Read through a per-process cache trusted for at most `cacheMs`, as API keys are: a change made
 * here is forgotten at once, and other processes are told through the bus (db/Bus.ts).
 */
import { Clock, Effect, Stream } from "effect"
import { Unauthorized } from "../../contract/Errors.ts"
import { Bus } from "../../db/Bus.ts"
import { traced } from "../../telemetry/Spans.ts"
import { UsersRepo } from "./Repo.ts"

export const cacheMs = 2_000
/** How a changed user is named on the bus: this, then their id. */
const userNotice = "user:"

interface UserState {
  readonly exists: boolean
  readonly disabled: boolean
  readonly validAfterMs: number
  readonly fetchedAt: number
}

const refused = new Unauthorized({ detail: "Invalid or expired credentials" })
const disabled = new Unauthorized({ detail: "This account is disabled" })

export class UserGate extends Effect.Service<UserGate>()("cairn/UserGate", {
  scoped: Effect.gen(function*() {
    const repo = yield* UsersRepo
    const bus = yield* Bus
    const cache = new Map<string, UserState>()
    yield* Effect.forkScoped(
      bus.changes("invalidate").pipe(
        Stream.runForEach((key) =>
          Effect.sync(() => {
            if (key === "*") cache.clear()
            else if (key.startsWith(userNotice)) cache.delete(key.slice(userNotice.length))
          })
        )
      )
    )

    const stateOf = (id: string, now: number) =>
      Effect.gen(function*() {
        const hit = cache.get(id)
        if (hit && now - hit.fetchedAt < cacheMs) return hit
        const row = yield* repo.byId(id)
        const state: UserState = {
          exists: row !== undefined,
          disabled: row?.disabled_at != null,
          validAfterMs: row?.tokens_valid_after?.getTime() ?? 0,
          fetchedAt: now
        }
        if (cache.size >= 10_000) cache.clear()
        cache.set(id, state)
        return state
      })

    /**
     * Passes a user's token issued at `issuedMs` (undefined: an API key the user made, which no
     * sign-out ends), or refuses it with 401.
     */
    const admit = (userId: string, issuedMs: number | undefined): Effect.Effect<void, Unauthorized> =>
      Effect.gen(function*() {
        const state = yield* stateOf(userId, yield* Clock.currentTimeMillis)
        // A deleted user's keys are revoked with them (Users.remove); until a process's key cache
        // learns that, the missing user refuses the key here.
        if (!state.exists) return yield* refused
        if (state.disabled) return yield* disabled
        if (issuedMs !== undefined && issuedMs < state.validAfterMs) return yield* refused
      })

    /** The user changed: forgotten here at once, and in every other process through the bus. */
    const changed = (userId: string) =>
      Effect.zipRight(Effect.sync(() => cache.delete(userId)), bus.publish("invalidate", `${userNotice}${userId}`))

    return traced("UserGate", { admit, changed } as const)
  }),
  dependencies: [UsersRepo.Default, Bus.Default]
}) {}

/** When a user token was issued, in milliseconds: its `iat_ms` claim, else its `iat`. */
export const issuedAtMs = (claims: { readonly iat?: number; readonly [key: string]: unknown }): number =>
  typeof claims["iat_ms"] === "number" ? claims["iat_ms"] : (claims.iat ?? 0) * 1000
