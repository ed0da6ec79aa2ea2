/**
 * Scoped API keys: creation (the value is shown once and stored as a SHA-256 hash), listing,
 * changes, revocation, and resolving a presented key to a principal.
 *
 * Resolution reads through a per-process cache that trusts a row for at most `cacheMs`: a key
 * revoked or re-scoped here is forgotten at once, and every other server process is told through
 * the bus (db/Bus.ts) and forgets it too; `cacheMs` bounds it should that notice be lost. Expiry is checked against the clock on every request, so it is
 * exact. `last_used_at` is written at most once per `touchEveryMs` per key and process, off the
 * request path.
 */
import { Clock, Effect, FiberSet, Stream } from "effect"
import * as crypto from "node:crypto"
import type { PrincipalShape } from "../../auth/Principal.ts"
import { expandScopes } from "../../auth/Scopes.ts"
import { Unauthorized, ValidationError } from "../../contract/Errors.ts"
import { Bus } from "../../db/Bus.ts"
import { traced } from "../../telemetry/Spans.ts"
import { ApiKeyNotFound } from "./Errors.ts"
import { ApiKeyView, type CreateApiKey, CreatedApiKey, type UpdateApiKey } from "./Model.ts"
import { type ApiKeyRow, ApiKeysRepo } from "./Repo.ts"

export const KEY_PREFIX = "ask_"
export const cacheMs = 2_000
export const touchEveryMs = 60_000
/** How a changed key is named on the bus: this, then its id. */
const keyNotice = "api_key:"

export const hashKey = (value: string): string => crypto.createHash("sha256").update(value).digest("base64url")

const invalid = new Unauthorized({ detail: "Invalid or expired credentials" })

const statusOf = (row: ApiKeyRow, now: number): ApiKeyView["status"] =>
  row.revoked_at ? "revoked" : row.expires_at && row.expires_at.getTime() <= now ? "expired" : "active"

const toView = (row: ApiKeyRow, now: number) =>
  new ApiKeyView({
    id: row.id,
    name: row.name,
    prefix: row.display_prefix,
    scopes: row.scopes,
    created_at: row.created_at,
    expires_at: row.expires_at,
    revoked_at: row.revoked_at,
    last_used_at: row.last_used_at,
    owner_user_id: row.owner_user_id,
    status: statusOf(row, now)
  })

interface CacheEntry {
  readonly row: ApiKeyRow
  readonly principal: PrincipalShape
  readonly fetchedAt: number
}

export class ApiKeys extends Effect.Service<ApiKeys>()("cairn/ApiKeys", {
  scoped: Effect.gen(function*() {
    const repo = yield* ApiKeysRepo
    const bus = yield* Bus
    const background = yield* FiberSet.make()
    const cache = new Map<string, CacheEntry>()
    const lastTouched = new Map<string, number>()

    const forgetHere = (id: string) => {
      for (const [hash, entry] of cache) if (entry.row.id === id) cache.delete(hash)
    }
    const forget = (id: string) => Effect.zipRight(Effect.sync(() => forgetHere(id)), bus.publish("invalidate", `${keyNotice}${id}`))
    // A key changed through another process; after the bus reconnects ("*"), anything may have.
    yield* Effect.forkScoped(
      bus.changes("invalidate").pipe(
        Stream.runForEach((key) =>
          Effect.sync(() => {
            if (key === "*") cache.clear()
            else if (key.startsWith(keyNotice)) forgetHere(key.slice(keyNotice.length))
          })
        )
      )
    )

    const notFound = (id: string) => new ApiKeyNotFound({ detail: `API key not found: ${id}` })

    /** A new key; `owner` is the signed-in user making it (none for the static key or the server itself). */
    const create = (input: CreateApiKey, owner: string | null = null) =>
      Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        const expiresAt = input.expires_at ?? null
        if (expiresAt && expiresAt.getTime() <= now) {
          return yield* ValidationError.single(["body", "expires_at"], "expires_at must be in the future")
        }
        const key = KEY_PREFIX + crypto.randomBytes(32).toString("base64url")
        const row = yield* repo.insert({
          id: crypto.randomUUID(),
          name: input.name,
          keyHash: hashKey(key),
          prefix: key.slice(0, KEY_PREFIX.length + 8),
          scopes: [...new Set(input.scopes)],
          expiresAt,
          ownerUserId: owner
        })
        return new CreatedApiKey({
          id: row.id,
          name: row.name,
          key,
          full_key: key,
          prefix: row.display_prefix,
          scopes: row.scopes,
          created_at: row.created_at,
          expires_at: row.expires_at,
          owner_user_id: row.owner_user_id
        })
      })

    const list = Effect.gen(function*() {
      const now = yield* Clock.currentTimeMillis
      const rows = yield* repo.list
      return rows.map((row) => toView(row, now))
    })

    const get = (id: string) =>
      Effect.gen(function*() {
        const row = yield* repo.byId(id)
        if (!row) return yield* notFound(id)
        return toView(row, yield* Clock.currentTimeMillis)
      })

    /** The raw row, for services that copy a key's scopes (widget tokens). */
    const row = (id: string) => Effect.flatMap(repo.byId(id), (found) => (found ? Effect.succeed(found) : Effect.fail(notFound(id))))

    const update = (id: string, changes: UpdateApiKey) =>
      Effect.gen(function*() {
        const updated = yield* repo.update(id, {
          ...(changes.name !== undefined ? { name: changes.name } : {}),
          ...(changes.scopes !== undefined ? { scopes: [...new Set(changes.scopes)] } : {})
        })
        if (!updated) return yield* notFound(id)
        yield* forget(id)
        return toView(updated, yield* Clock.currentTimeMillis)
      })

    const revoke = (id: string) =>
      Effect.gen(function*() {
        const revoked = yield* repo.revoke(id)
        if (!revoked) return yield* notFound(id)
        yield* forget(id)
        return toView(revoked, yield* Clock.currentTimeMillis)
      })

    const touch = (id: string, now: number) =>
      Effect.gen(function*() {
        const last = lastTouched.get(id)
        if (last !== undefined && now - last < touchEveryMs) return
        lastTouched.set(id, now)
        yield* FiberSet.run(
          background,
          repo.touch(id, new Date(now)).pipe(Effect.catchAllCause((cause) => Effect.logWarning("Cannot record key use", cause)))
        )
      })

    /** The principal of a presented `ask_` key, or 401 when it is unknown, revoked or expired. */
    const authenticate = (value: string): Effect.Effect<PrincipalShape, Unauthorized> =>
      Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        const hash = hashKey(value)
        let entry = cache.get(hash)
        if (!entry || now - entry.fetchedAt >= cacheMs) {
          const found = yield* repo.byHash(hash).pipe(Effect.orDie)
          if (!found) {
            cache.delete(hash)
            return yield* invalid
          }
          entry = {
            row: found,
            principal: {
              kind: "scoped_key",
              id: found.id,
              scopes: expandScopes(found.scopes),
              ...(found.owner_user_id !== null ? { user: found.owner_user_id } : {})
            },
            fetchedAt: now
          }
          cache.set(hash, entry)
        }
        if (statusOf(entry.row, now) !== "active") return yield* invalid
        yield* touch(entry.row.id, now)
        return entry.principal
      })

    return traced("ApiKeys", { create, list, get, row, update, revoke, authenticate } as const)
  }),
  dependencies: [ApiKeysRepo.Default, Bus.Default]
}) {}
