/**
 * Startup and the engine: the workflow files (`workflows/` of the project, then each directory of
 * WORKFLOWS_DIR) are synced into the database and the tool triggers registered; then one engine
 * across every server process (the leader of `workflows`) starts the scheduled runs that are due
 * (slots missed while no server ran start one run, then the schedule goes on from now) and moves
 * every running run on. It looks when a task changes (a step's task ends: the bus), when a
 * workflow or run is made, at the next schedule slot, and every WORKFLOW_TICK_MS while runs are
 * going (their steps' timeouts and retries); with nothing going it sleeps. An API call (run,
 * approve, skip, retry) moves its run at once as well.
 */
import { SqlClient } from "@effect/sql"
import { Config, Duration, Effect, Layer } from "effect"
import { Schema } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import YAML from "yaml"
import { AppConfig, repositoryFolder } from "../config/AppConfig.ts"
import { projectDir } from "../config/ProjectRoot.ts"
import { Bus } from "../db/Bus.ts"
import { Leadership } from "../db/Leadership.ts"
import { nextSlot } from "../heartbeats/Slots.ts"
import { WorkflowDefinition } from "./Definition.ts"
import { WorkflowsRepo } from "./Repo.ts"
import { Workflows } from "./Workflows.ts"

const engineConfig = Config.all({
  tickMs: Config.integer("WORKFLOW_TICK_MS").pipe(Config.withDefault(500)),
  dirs: Config.string("WORKFLOWS_DIR").pipe(
    Config.withDefault(""),
    Config.map((raw) => raw.split(",").map((dir) => dir.trim()).filter((dir) => dir.length > 0))
  )
})

/** The engine's look with no run going and no slot near: a bound for a change the bus did not tell of. */
const idleLook = Duration.minutes(1)

export const projectWorkflowsDir = projectDir("workflows")

/** The definitions in a directory's `.yaml`, `.yml` and `.json` files; a file that is not one is logged and left out. */
const readDir = (dir: string) =>
  Effect.gen(function*() {
    if (!fs.existsSync(dir)) return []
    const found: Array<{ readonly definition: WorkflowDefinition; readonly file: string }> = []
    for (const name of fs.readdirSync(dir).sort()) {
      if (!/\.(ya?ml|json)$/.test(name)) continue
      const file = path.join(dir, name)
      const parsed = yield* Effect.try(
        () => (name.endsWith(".json") ? JSON.parse(fs.readFileSync(file, "utf8")) : YAML.parse(fs.readFileSync(file, "utf8")))
      ).pipe(
        Effect.flatMap((raw) => Schema.decodeUnknown(WorkflowDefinition, { errors: "all", onExcessProperty: "error" })(raw)),
        Effect.either
      )
      if (parsed._tag === "Left") yield* Effect.logWarning(`Workflow file ${file} was not loaded: ${String(parsed.left)}`)
      else found.push({ definition: parsed.right, file })
    }
    return found
  })

/**
 * Syncs the workflow files of `dirs` into the database (one changed through the API is left as it
 * is); answers their ids. Their tool triggers are registered by `Workflows.registerTools`.
 */
export const syncWorkflowFiles = (dirs: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const repo = yield* WorkflowsRepo
    const ids: Array<string> = []
    for (const dir of dirs) {
      for (const { definition, file } of yield* readDir(dir)) {
        yield* repo.syncFromFile(definition.id, Schema.encodeSync(WorkflowDefinition)(definition), file)
        ids.push(definition.id)
      }
    }
    return ids
  })

export const WorkflowEngineLive = Layer.scopedDiscard(
  Effect.gen(function*() {
    const config = yield* engineConfig
    const repo = yield* WorkflowsRepo
    const workflows = yield* Workflows
    const leadership = yield* Leadership
    const bus = yield* Bus
    const sql = yield* SqlClient.SqlClient
    const appConfig = yield* AppConfig
    yield* syncWorkflowFiles([projectWorkflowsDir, ...config.dirs, ...repositoryFolder(appConfig, "workflows")])
    yield* workflows.registerTools
    /**
     * Starts a run for each schedule whose slot has come (once: the slot moves on first), and sets
     * new schedules' first slot. Answers the earliest slot still to come, if any.
     */
    const fireSchedules = Effect.gen(function*() {
      const now = new Date()
      let earliest: number | undefined
      const upcoming = (at: Date) => {
        earliest = earliest === undefined ? at.getTime() : Math.min(earliest, at.getTime())
      }
      for (const row of yield* repo.scheduled) {
        const definition = yield* Effect.either(Schema.decodeUnknown(WorkflowDefinition)(row.definition))
        if (definition._tag === "Left" || !definition.right.triggers.schedule) continue
        const schedule = definition.right.triggers.schedule
        const next = nextSlot({ intervalSeconds: null, cron: schedule.cron, timezone: schedule.timezone }, now, now)
        if (row.next_at === null) {
          yield* repo.moveSchedule(row.id, null, next)
          upcoming(next)
          continue
        }
        if (row.next_at > now) {
          upcoming(row.next_at)
          continue
        }
        const slot = row.next_at
        upcoming(next)
        // The slot moves on and its run starts together: neither without the other, whatever stops.
        yield* sql
          .withTransaction(
            Effect.gen(function*() {
              if (!(yield* repo.moveSchedule(row.id, slot, next))) return
              yield* workflows.start(row.id, schedule.params, `schedule:${slot.toISOString()}`, "schedule")
            })
          )
          .pipe(Effect.catchAllCause((cause) => Effect.logWarning(`The scheduled run of workflow ${row.id} did not start`, cause)))
      }
      return earliest
    })

    /** One look: fires due slots, moves running runs on, and answers how long it may sleep. */
    const tick = Effect.gen(function*() {
      const nextSlot = yield* fireSchedules
      const active = yield* repo.activeRunIds
      for (const runId of active) yield* workflows.advance(runId)
      if (active.length > 0) return config.tickMs
      return Math.max(0, Math.min(Duration.toMillis(idleLook), nextSlot === undefined ? Infinity : nextSlot - Date.now()))
    }).pipe(
      Effect.catchAllCause((cause) => Effect.as(Effect.logWarning("Workflow engine tick failed", cause), config.tickMs))
    )

    // Looks again when a task changes (a step's task ended) or a workflow or run is made.
    const engine = bus.lookLoop(["task", "workflows"], tick, config.tickMs)
    yield* leadership.lead("workflows", engine, { onFollowing: Effect.void, onLeading: Effect.logDebug("Leading the workflow engine") })
      .pipe(Effect.forkScoped)
  })
).pipe(Layer.provide(Layer.mergeAll(Workflows.Default, WorkflowsRepo.Default, Leadership.Default, Bus.Default)))
