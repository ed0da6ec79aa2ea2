/**
 * Memory pressure: the server reads its resident memory on a cadence and, above the soft limit
 * (MEMORY_SOFT_LIMIT_MB), starts no new run: intake answers 503 with Retry-After, the task worker
 * leaves queued tasks queued, and readiness says `shedding`; runs already going and their streams
 * finish. Above the hard limit (MEMORY_HARD_LIMIT_MB) it restarts through its supervisor, after the
 * same drain as SIGTERM, before the kernel's OOM killer cuts every stream at once. Limits of 0 are
 * a share of the memory the process may have: its cgroup's limit (a container's), else the machine's.
 *
 * Resident memory, not the heap: what the OOM killer and a container's limit count includes
 * buffers, PGlite's WebAssembly memory and native allocations, which the heap does not.
 */
import { Deferred, Duration, Effect, Ref, Schedule } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import { AppConfig } from "../config/AppConfig.ts"
import { Overloaded } from "../contract/Errors.ts"
import { requestRestart } from "../operations/Restart.ts"
import { MemoryHardLimitMb, MemorySoftLimitMb } from "../settings/Model.ts"
import { Settings } from "../settings/Settings.ts"

/** Where the resident memory is read: the process's own, or another source given to `make`. */
export interface MemorySource {
  readonly rssBytes: () => number
}

export const processMemory: MemorySource = { rssBytes: () => process.memoryUsage.rss() }

/** The shares of the memory limit that the limits of 0 mean. */
export const softShare = 0.8
export const hardShare = 0.9

/** A refused run is worth retrying after this long: a few samples, and some collections, later. */
export const retryAfterSeconds = 10

/** How often memory is read (MEMORY_SAMPLE_MS): a read of the resident set is a cheap system call. */
export const sampleCadence = (sampleMs: number) => Schedule.spaced(Duration.millis(sampleMs))

const mb = 1024 * 1024

/**
 * A cgroup's memory limit file as bytes, or null for none: v2 writes `max`, v1 a number near 2^63
 * (a page-rounded LONG_MAX), both meaning unlimited.
 */
export const parseCgroupLimit = (text: string): number | null => {
  const value = text.trim()
  if (value === "" || value === "max") return null
  const bytes = Number(value)
  return Number.isFinite(bytes) && bytes > 0 && bytes < 2 ** 60 ? bytes : null
}

/**
 * The limit files that bound this process, from `/proc/self/cgroup`: under cgroups v2 its own
 * group's `memory.max` and each ancestor's up to the root (a systemd slice's limit binds its
 * services too); under v1 the memory controller's group and the root. Inside a container the
 * paths are `/`, which is the container's own group.
 */
export const cgroupLimitFiles = (procSelfCgroup: string): Array<string> => {
  const files: Array<string> = []
  for (const line of procSelfCgroup.split("\n")) {
    const [, controllers, groupPath] = line.split(":", 3)
    if (groupPath === undefined) continue
    const parts = groupPath.split("/").filter((part) => part.length > 0)
    if (controllers === "") {
      for (let depth = parts.length; depth >= 0; depth--) {
        files.push(["/sys/fs/cgroup", ...parts.slice(0, depth), "memory.max"].join("/"))
      }
    } else if (controllers!.split(",").includes("memory")) {
      files.push(["/sys/fs/cgroup/memory", ...parts, "memory.limit_in_bytes"].join("/"))
      if (parts.length > 0) files.push("/sys/fs/cgroup/memory/memory.limit_in_bytes")
    }
  }
  return files
}

const readLimitFile = (file: string): number | null => {
  try {
    return parseCgroupLimit(fs.readFileSync(file, "utf8"))
  } catch {
    return null
  }
}

const ownCgroup = (): string => {
  try {
    return fs.readFileSync("/proc/self/cgroup", "utf8")
  } catch {
    return ""
  }
}

/** The memory this process may have in bytes: the lowest limit of its cgroups, never above the machine's memory. */
export const memoryLimitBytes = (
  read: (file: string) => number | null = readLimitFile,
  procSelfCgroup: string = ownCgroup()
): number =>
  Math.min(
    os.totalmem(),
    ...cgroupLimitFiles(procSelfCgroup).map(read).filter((limit): limit is number => limit !== null)
  )

export interface Limits {
  readonly softMb: number
  readonly hardMb: number
}

/** One limit in effect: as set, or for 0 its share of `limitBytes`. */
const limitMb = (set: number, share: number, limitBytes: number) => (set > 0 ? set : Math.floor((limitBytes * share) / mb))

/** The limits in effect: each set one as it is, a 0 as its share of `limitBytes`. */
export const effectiveLimits = (soft: number, hard: number, limitBytes: number): Limits => ({
  softMb: limitMb(soft, softShare, limitBytes),
  hardMb: limitMb(hard, hardShare, limitBytes)
})

/** What readiness shows of memory. */
export interface MemoryStatus extends Limits {
  readonly rssMb: number
  readonly shedding: boolean
}

export class Memory extends Effect.Service<Memory>()("cairn/Memory", {
  scoped: Effect.gen(function*() {
    const config = yield* AppConfig
    const settings = yield* Settings
    return yield* make(processMemory, config.memorySampleMs, config.supervisor, settings)
  }),
  dependencies: [Settings.Default]
}) {}

/**
 * The watch over `source`, sampled every `sampleMs` for as long as the scope lasts. The limits are
 * read from the settings at each look, so a changed limit counts from the next request on.
 */
export const make = (source: MemorySource, sampleMs: number, supervisor: string | null, settings: Settings) =>
  Effect.gen(function*() {
    const limitBytes = memoryLimitBytes()
    let rssMb = source.rssBytes() / mb
    const limits = Effect.map(
      Effect.all([settings.get(MemorySoftLimitMb), settings.get(MemoryHardLimitMb)]),
      ([soft, hard]) => effectiveLimits(soft, hard, limitBytes)
    )
    const status = Effect.map(limits, (current): MemoryStatus => ({
      ...current,
      rssMb: Math.round(rssMb),
      shedding: rssMb > current.softMb
    }))
    const shedding = Effect.map(status, (current) => current.shedding)
    /**
     * The soft limit alone, as every new run reads it: one cached setting and a comparison. The
     * whole status (both limits, an object) is built only for the refusal that shows it.
     */
    const softMb = Effect.map(settings.get(MemorySoftLimitMb), (soft) => limitMb(soft, softShare, limitBytes))

    // Completed (and replaced) when a sample finds the pressure gone that the one before found.
    const relief = yield* Ref.make(yield* Deferred.make<void>())
    let wasShedding = false
    // The hard limit acts once: a restart is under way, or there is nobody to restart the server.
    let hardLimitReached = false

    const sample = Effect.gen(function*() {
      rssMb = source.rssBytes() / mb
      const current = yield* status
      if (current.shedding !== wasShedding) {
        wasShedding = current.shedding
        if (current.shedding) {
          yield* Effect.logWarning(
            `Memory: ${current.rssMb} MB resident, above the soft limit of ${current.softMb} MB: new runs are refused until it falls`
          )
        } else {
          yield* Effect.logInfo(`Memory: ${current.rssMb} MB resident, under the soft limit of ${current.softMb} MB: new runs start again`)
          yield* Deferred.succeed(yield* Ref.getAndSet(relief, yield* Deferred.make<void>()), undefined)
        }
      }
      if (rssMb > current.hardMb && !hardLimitReached) {
        hardLimitReached = true
        if (supervisor === null) {
          yield* Effect.logError(
            `Memory: ${current.rssMb} MB resident, above the hard limit of ${current.hardMb} MB, and no supervisor would start the server again (systemd, pm2, SUPERVISED=true): it keeps running`
          )
        } else {
          yield* Effect.logError(
            `Memory: ${current.rssMb} MB resident, above the hard limit of ${current.hardMb} MB: draining and restarting through ${supervisor}`
          )
          yield* requestRestart
        }
      }
    })
    yield* Effect.forkScoped(
      sample.pipe(
        Effect.catchAllCause((cause) => Effect.logError("Memory sample failed", cause)),
        Effect.repeat(sampleCadence(sampleMs))
      )
    )

    return {
      status,
      shedding,
      /** Fails with a 503 while shedding: the check every new run passes first. */
      admit: Effect.flatMap(softMb, (soft) =>
        rssMb > soft
          ? Effect.flatMap(status, (current) =>
            Effect.fail(
              new Overloaded({
                detail:
                  `The server is short of memory (${current.rssMb} MB resident, soft limit ${current.softMb} MB) and starts no new run now; retry later`,
                retryAfterSeconds
              })
            ))
          : Effect.void),
      /** Completes when a sample finds the pressure gone (the task worker then claims again). */
      relieved: Effect.flatMap(Ref.get(relief), Deferred.await)
    } as const
  })
