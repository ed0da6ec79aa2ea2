/**
 * Readiness, for a load balancer (`GET /health/ready`): whether this process should be sent new
 * work. Liveness (`/health`) says only that it answers; a live server can be unready while it
 * drains, while its database is a standby or lacks this release's migrations, or while it sheds
 * load short of memory. At a stop the flag flips first and the server keeps serving for
 * DRAIN_DELAY_MS, so the balancer has seen it before connections start closing (`Drain.ts`).
 */
import { Duration, Effect } from "effect"
import { fromDirectory, migrationsDir } from "../db/Migrations.ts"
import { NotReady, ReadinessCheck, Ready } from "./Api.ts"
import { Memory } from "./Memory.ts"
import { HealthRepo } from "./Repo.ts"

/** A database that takes longer than this to answer is not ready. */
const databaseTimeout = Duration.seconds(3)

const passed = (detail: string) => new ReadinessCheck({ ok: true, detail })
const failed = (detail: string) => new ReadinessCheck({ ok: false, detail })

export class Readiness extends Effect.Service<Readiness>()("cairn/Readiness", {
  effect: Effect.gen(function*() {
    const repo = yield* HealthRepo
    const memory = yield* Memory
    // The latest migration this release ships: a database behind it is not ready for this code.
    const known = yield* Effect.orDie(fromDirectory(migrationsDir))
    const expected = known.at(-1)?.[0] ?? 0
    let draining = false

    const database = repo.state.pipe(
      Effect.flatten,
      Effect.timeoutFail({ duration: databaseTimeout, onTimeout: () => "did not answer within 3 s" }),
      Effect.mapError((error) => (typeof error === "string" ? error : "unavailable")),
      Effect.either
    )

    const check = Effect.gen(function*() {
      const state = yield* database
      const mem = yield* memory.status
      const checks = {
        database: state._tag === "Right" ? passed("answers") : failed(state.left),
        writable: state._tag === "Left"
          ? failed("unknown: the database does not answer")
          : state.right.read_only === "off"
          ? passed("takes writes")
          : failed("read-only (a standby, or default_transaction_read_only)"),
        migrations: state._tag === "Left"
          ? failed("unknown: the database does not answer")
          : (state.right.latest_migration ?? 0) >= expected
          ? passed(`applied up to ${expected}`)
          : failed(`applied up to ${state.right.latest_migration ?? 0}, this release needs ${expected}`),
        draining: draining ? failed("the server is stopping") : passed("not stopping"),
        memory: mem.shedding
          ? failed(`shedding: ${mem.rssMb} MB resident, above the soft limit of ${mem.softMb} MB`)
          : passed(`${mem.rssMb} MB resident, soft limit ${mem.softMb} MB, hard limit ${mem.hardMb} MB`)
      }
      const status = !checks.draining.ok
        ? "draining"
        : !(checks.database.ok && checks.writable.ok && checks.migrations.ok)
        ? "unavailable"
        : !checks.memory.ok
        ? "shedding"
        : null
      if (status === null) return new Ready({ status: "ready", checks })
      const reasons = Object.entries(checks).filter(([, c]) => !c.ok).map(([name, c]) => `${name}: ${c.detail}`)
      return yield* new NotReady({ status, detail: `Not ready (${reasons.join("; ")})`, checks })
    }).pipe(Effect.withTracerEnabled(false))

    /** Answers not ready from now on, then waits `delayMs` for a balancer to see it. */
    const beginDrain = (delayMs: number) =>
      Effect.gen(function*() {
        draining = true
        if (delayMs <= 0) return
        yield* Effect.logInfo(`Stopping: not ready; draining in ${delayMs} ms, once the balancer has noticed`)
        yield* Effect.sleep(Duration.millis(delayMs))
      })

    /** Whether the server is stopping: inbound work is refused and no new task is claimed (a drain). */
    const isDraining = Effect.sync(() => draining)

    return { check, beginDrain, isDraining } as const
  }),
  dependencies: [HealthRepo.Default, Memory.Default]
}) {}
