/**
 * Runtime settings: a stored value (database) beats the environment, which beats the default.
 * Reads come from a cache refreshed at most every `refreshMs`, so a change made through another
 * server process is seen within that bound; a change made here is seen at once.
 */
import { Effect, Either } from "effect"
import { AppConfig } from "../config/AppConfig.ts"
import { ValidationError, ValidationIssue } from "../contract/Errors.ts"
import { Bus } from "../db/Bus.ts"
import { makeSharedSnapshot } from "../db/Snapshot.ts"
import { traced } from "../telemetry/Spans.ts"
import { UnknownSetting } from "./Errors.ts"
import { definitionsByKey, type SettingDefinition, settingDefinitions, SettingView, validateSetting } from "./Model.ts"
import { SettingsRepo } from "./Repo.ts"

export const refreshMs = 2_000

export class Settings extends Effect.Service<Settings>()("cairn/Settings", {
  scoped: Effect.gen(function*() {
    const repo = yield* SettingsRepo
    const config = yield* AppConfig
    const snapshot = yield* makeSharedSnapshot(
      "settings",
      Effect.map(repo.all, (rows) => {
        const stored = new Map<string, unknown>()
        for (const row of rows) {
          const definition = definitionsByKey.get(row.key)
          // A value an older release stored that no longer validates falls back to the environment.
          if (definition && Either.isRight(validateSetting(definition, row.value))) stored.set(row.key, row.value)
        }
        return { stored }
      }),
      refreshMs
    )
    const current = snapshot.get
    const reload = snapshot.refresh

    const views = Effect.map(current, (snapshot) =>
      settingDefinitions.map(
        (definition) =>
          new SettingView({
            key: definition.key,
            value: snapshot.stored.has(definition.key) ? snapshot.stored.get(definition.key) : definition.fromConfig(config),
            source: snapshot.stored.has(definition.key) ? "stored" : "environment",
            description: definition.description,
            type: definition.type,
            default: definition.fromConfig(config)
          })
      ))

    /** The current value of one setting, typed by its declaration (stored values were validated on load). */
    const get = <A>(setting: SettingDefinition<A>): Effect.Effect<A> =>
      snapshot.read((current) => (current.stored.has(setting.key) ? (current.stored.get(setting.key) as A) : setting.fromConfig(config)))

    /** Validates every value first; stores none of them when any is wrong. */
    const update = (values: Readonly<Record<string, unknown>>) =>
      Effect.gen(function*() {
        const issues: Array<ValidationIssue> = []
        const accepted: Array<readonly [string, unknown]> = []
        for (const [key, value] of Object.entries(values)) {
          const definition = definitionsByKey.get(key)
          if (!definition) {
            issues.push(new ValidationIssue({ loc: ["body", key], msg: `Unknown setting: ${key}`, type: "unknown_setting" }))
            continue
          }
          const checked = validateSetting(definition, value)
          if (Either.isLeft(checked)) {
            issues.push(new ValidationIssue({ loc: ["body", key], msg: checked.left, type: "value_error" }))
          } else {
            accepted.push([key, checked.right])
          }
        }
        if (issues.length > 0) return yield* new ValidationError({ detail: issues })
        yield* repo.upsertMany(accepted)
        yield* reload
        return yield* views
      })

    const reset = (key: string) =>
      Effect.gen(function*() {
        if (!definitionsByKey.has(key)) return yield* new UnknownSetting({ detail: `Unknown setting: ${key}` })
        yield* repo.remove(key)
        yield* reload
        return yield* views
      })

    return traced("Settings", { views, get, update, reset } as const)
  }),
  dependencies: [SettingsRepo.Default, Bus.Default]
}) {}
