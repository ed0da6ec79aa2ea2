/**
 * SQL for what each credential has running (`run_slots`, RUNS_PER_CREDENTIAL_MAX): its runs and its
 * provider calls made outside a run. A slot is taken under the credential's advisory lock, so
 * parallel starts on any number of server processes are counted one after another and never admit
 * more than the cap.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { CountRow, decodeRows, IdRow, repository, transactions } from "../db/Repository.ts"

/** The advisory lock space of run slots (the two-key form, apart from the one-key locks elsewhere). */
const slotLockSpace = 6201

export class RunSlotsRepo extends Effect.Service<RunSlotsRepo>()("cairn/RunSlotsRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const transaction = transactions(sql)
    const ids = decodeRows(IdRow)
    const counts = decodeRows(CountRow)
    /** Slots that count: renewed within `staleSeconds` by the process holding them. */
    const live = (credential: string, staleSeconds: number) =>
      sql`credential = ${credential} AND seen_at > now() - make_interval(secs => ${staleSeconds}::float8)`
    return repository("RunSlotsRepo", {
      /** Takes slot `id` for `credential` when it holds fewer than `max` live ones; whether it did. */
      take: (input: { id: string; credential: string; owner: string; max: number; staleSeconds: number }) =>
        transaction(Effect.gen(function*() {
          // The lock makes the count and the insert one step: the next taker counts after this commits.
          yield* sql`SELECT pg_advisory_xact_lock(${slotLockSpace}::int, hashtext(${input.credential}))`
          const taken = yield* ids(sql`
            INSERT INTO run_slots (id, credential, owner) SELECT ${input.id}::uuid, ${input.credential}, ${input.owner}
            WHERE (SELECT count(*) FROM run_slots WHERE ${live(input.credential, input.staleSeconds)}) < ${input.max}::int
            RETURNING id::text AS id`)
          return taken.length > 0
        })),
      give: (id: string) => sql`DELETE FROM run_slots WHERE id = ${id}::uuid`.pipe(Effect.asVoid),
      count: (credential: string, staleSeconds: number) =>
        counts(sql`SELECT count(*)::int AS n FROM run_slots WHERE ${live(credential, staleSeconds)}`).pipe(
          Effect.map((rows) => rows[0]?.n ?? 0)
        ),
      /** Keeps the slots of runs and calls still going here live; drops slots long stale (their process is gone). */
      renew: (held: ReadonlyArray<string>, staleSeconds: number) =>
        Effect.zipRight(
          held.length > 0 ? sql`UPDATE run_slots SET seen_at = now() WHERE id IN ${sql.in(held)}` : Effect.void,
          sql`DELETE FROM run_slots WHERE seen_at < now() - make_interval(secs => ${staleSeconds * 10}::float8)`
        ).pipe(Effect.asVoid)
    })
  })
}) {}
