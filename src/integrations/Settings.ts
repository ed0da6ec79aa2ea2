/**
 * Integration settings, declared by each manifest's env_vars. A value resolves as the stored
 * setting, then the environment variable, then the manifest default. Secret values are stored
 * encrypted and shown masked everywhere; a masked value sent back unchanged keeps the secret,
 * except when the same request changes a `*_URL` setting (see `secretsCarriedToNewUrl`).
 */
import { Config, Effect, Option, PubSub, Stream } from "effect"
import { ApiKeys } from "../access/keys/ApiKeys.ts"
import { CreateApiKey } from "../access/keys/Model.ts"
import { presets } from "../auth/Scopes.ts"
import { ValidationError, ValidationIssue } from "../contract/Errors.ts"
import { Bus } from "../db/Bus.ts"
import { makeSharedSnapshot } from "../db/Snapshot.ts"
import { settingProblem } from "../sdk/Settings.ts"
import { MASK } from "../secrets/Mask.ts"
import { makeKeyVaultFor } from "../secrets/Vault.ts"
import { traced } from "../telemetry/Spans.ts"
import type { NormalizedEnvVar, NormalizedManifest } from "./Manifest.ts"
import { IntegrationsRepo } from "./Repo.ts"

export type SettingSource = "stored" | "environment" | "default" | "unset"

export interface ResolvedSetting {
  readonly key: string
  readonly value: string | undefined
  readonly source: SettingSource
  readonly secret: boolean
  readonly required: boolean
  readonly description: string
  /** The manifest's default (what an unset value falls back to). */
  readonly default: string | undefined
  /** How the form shows it (the manifest's label, type, choices, group, advanced). */
  readonly form: Pick<NormalizedEnvVar, "label" | "type" | "choices" | "group" | "advanced">
}

/** What a response may show: secrets are masked when set. */
export const shown = (setting: ResolvedSetting) => ({
  key: setting.key,
  value: setting.secret && setting.value !== undefined ? MASK : (setting.value ?? null),
  is_set: setting.value !== undefined,
  source: setting.source,
  secret: setting.secret,
  required: setting.required,
  description: setting.description,
  default: setting.secret && setting.default !== undefined ? MASK : (setting.default ?? null),
  ...setting.form
})

/** ready: every required value resolves; partial: some do; not_configured: none does. */
export const statusOf = (settings: ReadonlyArray<ResolvedSetting>): "ready" | "partial" | "not_configured" => {
  const required = settings.filter((s) => s.required)
  const present = required.filter((s) => s.value !== undefined).length
  if (present === required.length) return "ready"
  return present === 0 ? "not_configured" : "partial"
}

/** The preset an integration's process key gets when its manifest names none. */
export const defaultKeyPreset = "messaging_integration"

/** The integrations' stored settings in memory: read on every worker look and SDK `settings.get`. */
const storedSnapshotName = "integration-settings"

export class IntegrationSettings extends Effect.Service<IntegrationSettings>()("cairn/IntegrationSettings", {
  scoped: Effect.gen(function*() {
    const repo = yield* IntegrationsRepo
    const bus = yield* Bus
    const vault = yield* makeKeyVaultFor("integration-settings")
    const apiKeys = yield* ApiKeys
    /**
     * Announces an integration whose settings changed (its workers and process restart), or "*"
     * when another process changed some (each then compares what it runs with).
     */
    const changes = yield* PubSub.unbounded<string>()
    // Every process keeps them in step through the bus; the window bounds a lost notice.
    const storedSettings = yield* makeSharedSnapshot(storedSnapshotName, repo.allSettings, 60_000)
    yield* Effect.forkScoped(
      bus.changes("invalidate").pipe(
        Stream.filter((key) => key === storedSnapshotName || key === "*"),
        Stream.runForEach(() => PubSub.publish(changes, "*"))
      )
    )

    // The environment as the server was configured (a .env file, or a test's own provider).
    const provider = yield* Effect.configProviderWith(Effect.succeed)
    const environment = (key: string) =>
      Config.option(Config.string(key)).pipe(
        Effect.map((value) => Option.getOrUndefined(Option.filter(value, (v) => v !== ""))),
        Effect.withConfigProvider(provider),
        Effect.orElseSucceed(() => undefined)
      )

    const stored = (integrationId: string) => Effect.map(storedSettings.get, (all) => all.get(integrationId) ?? new Map<string, string>())

    const resolve = (integrationId: string, manifest: NormalizedManifest) =>
      Effect.gen(function*() {
        const values = yield* stored(integrationId)
        return yield* Effect.forEach(manifest.env_vars, (spec) =>
          Effect.map(environment(spec.key), (fromEnv): ResolvedSetting => {
            const raw = values.get(spec.key)
            const storedValue = raw === undefined ? undefined : spec.secret ? vault.decrypt(raw) : raw
            const [value, source]: [string | undefined, SettingSource] = storedValue !== undefined
              ? [storedValue, "stored"]
              : fromEnv !== undefined
              ? [fromEnv, "environment"]
              : spec.default !== undefined
              ? [spec.default, "default"]
              : [undefined, "unset"]
            return {
              key: spec.key,
              value,
              source,
              secret: spec.secret,
              required: spec.required,
              description: spec.description,
              default: spec.default,
              form: { label: spec.label, type: spec.type, choices: spec.choices, group: spec.group, advanced: spec.advanced }
            }
          }))
      })

    /** What a setting resolves to once `written` (null: forgotten) is stored. */
    const resolvedAfter = (spec: NormalizedEnvVar, written: string | null, before: ResolvedSetting) =>
      written !== null
        ? Effect.succeed({ value: written, source: "stored" as SettingSource })
        : before.source !== "stored"
        ? Effect.succeed({ value: before.value, source: before.source })
        : Effect.map(environment(spec.key), (fromEnv) =>
          fromEnv !== undefined
            ? { value: fromEnv, source: "environment" as SettingSource }
            : { value: spec.default, source: (spec.default !== undefined ? "default" : "unset") as SettingSource })

    /**
     * A secret goes only where it went before. When a non-secret `*_URL` setting changes, each secret
     * that would keep a value from before (stored or from the environment: sent back masked, or not
     * sent) is refused, so only a caller who knows it can point it at a new address.
     */
    const secretsCarriedToNewUrl = (
      integrationId: string,
      manifest: NormalizedManifest,
      values: Readonly<Record<string, unknown>>,
      writes: ReadonlyArray<readonly [string, string | null]>
    ) =>
      Effect.gen(function*() {
        const specs = new Map(manifest.env_vars.map((spec) => [spec.key, spec]))
        const written = new Map(writes)
        const urlWrites = writes.filter(([key]) => key.endsWith("_URL") && !specs.get(key)!.secret)
        if (urlWrites.length === 0) return []
        const before = new Map((yield* resolve(integrationId, manifest)).map((setting) => [setting.key, setting]))
        const changedUrls: Array<string> = []
        for (const [key, value] of urlWrites) {
          const after = yield* resolvedAfter(specs.get(key)!, value, before.get(key)!)
          if (after.value !== before.get(key)!.value) changedUrls.push(key)
        }
        if (changedUrls.length === 0) return []
        const issues: Array<ValidationIssue> = []
        for (const spec of manifest.env_vars) {
          if (!spec.secret) continue
          const sent = written.get(spec.key)
          if (typeof sent === "string") continue
          // Forgotten (null), it may still fall back to the environment; masked or not sent, it stays.
          const after = sent === null ? yield* resolvedAfter(spec, null, before.get(spec.key)!) : before.get(spec.key)!
          if (after.source !== "stored" && after.source !== "environment") continue
          const how = sent === null ? "falls back to the environment" : values[spec.key] === MASK ? "was sent back masked" : "was not sent"
          issues.push(
            new ValidationIssue({
              loc: ["body", spec.key],
              msg: `${
                changedUrls.join(", ")
              } changes, and the secret ${spec.key} ${how}: secrets kept from before are not sent to a changed URL; send ${spec.key} again in the clear in the same request`,
              type: "value_error"
            })
          )
        }
        return issues
      })

    /** The writes `values` stand for, checked as a save checks them (422 naming each wrong key). */
    const checked = (integrationId: string, manifest: NormalizedManifest, values: Readonly<Record<string, unknown>>) =>
      Effect.gen(function*() {
        const specs = new Map(manifest.env_vars.map((spec) => [spec.key, spec]))
        const issues: Array<ValidationIssue> = []
        const writes: Array<readonly [string, string | null]> = []
        for (const [key, value] of Object.entries(values)) {
          const spec = specs.get(key)
          if (!spec) {
            issues.push(
              new ValidationIssue({ loc: ["body", key], msg: `${integrationId} declares no setting ${key}`, type: "unknown_setting" })
            )
            continue
          }
          if (value !== null && typeof value !== "string" && typeof value !== "number" && typeof value !== "boolean") {
            issues.push(new ValidationIssue({ loc: ["body", key], msg: "Expected a string, number, boolean or null", type: "type_error" }))
            continue
          }
          if (spec.secret && value === MASK) continue
          const text = value === null || value === "" ? null : String(value)
          const problem = text === null ? undefined : settingProblem(spec, text)
          if (problem) {
            issues.push(new ValidationIssue({ loc: ["body", key], msg: problem, type: "value_error" }))
            continue
          }
          writes.push([key, text])
        }
        issues.push(...(yield* secretsCarriedToNewUrl(integrationId, manifest, values, writes)))
        if (issues.length > 0) return yield* new ValidationError({ detail: issues })
        return writes
      })

    /**
     * Stores new values: every key must be declared; null or "" forgets the stored value; a secret
     * sent back as the mask is left as it is, unless a `*_URL` setting changes. All or nothing.
     */
    const update = (integrationId: string, manifest: NormalizedManifest, values: Readonly<Record<string, unknown>>) =>
      Effect.gen(function*() {
        const specs = new Map(manifest.env_vars.map((spec) => [spec.key, spec]))
        const writes = yield* checked(integrationId, manifest, values)
        yield* repo.writeSettings(
          integrationId,
          writes.map(([key, value]) => [key, value !== null && specs.get(key)!.secret ? vault.encrypt(value) : value] as const)
        )
        yield* storedSettings.refresh
        yield* PubSub.publish(changes, integrationId)
        return yield* resolve(integrationId, manifest)
      })

    /**
     * The key the integration's process calls back with: created from the manifest's preset the
     * first time it is needed, then kept (encrypted) so restarts reuse it.
     */
    const processApiKey = (integrationId: string, manifest: NormalizedManifest): Effect.Effect<string, unknown> =>
      Effect.gen(function*() {
        const stored = Option.getOrUndefined(yield* repo.processKey(integrationId))
        const existing = stored ? vault.decrypt(stored.key_value) : undefined
        if (stored && existing) {
          const usable = yield* Effect.either(apiKeys.authenticate(existing))
          if (usable._tag === "Right") return existing
        }
        const presetId = manifest.api_key_preset ?? defaultKeyPreset
        const preset = presets.find((p) => p.id === presetId) ?? presets.find((p) => p.id === defaultKeyPreset)!
        const created = yield* apiKeys.create(new CreateApiKey({ name: `integration:${integrationId}`, scopes: preset.scopes }))
        // Replace only the row we read: when another process replaced it meanwhile, its key wins
        // and ours is revoked, so no unused key stays active.
        const swapped = yield* repo.saveProcessKey(integrationId, created.id, vault.encrypt(created.key), stored?.api_key_id)
        if (!swapped) {
          yield* apiKeys.revoke(created.id).pipe(Effect.ignore)
          return yield* processApiKey(integrationId, manifest)
        }
        if (stored) yield* apiKeys.revoke(stored.api_key_id).pipe(Effect.ignore)
        return created.key
      })

    /** The settings as they would resolve with `values` saved, checked as a save is; nothing is stored. */
    const tryValues = (integrationId: string, manifest: NormalizedManifest, values: Readonly<Record<string, unknown>>) =>
      Effect.gen(function*() {
        const writes = yield* checked(integrationId, manifest, values)
        const before = yield* resolve(integrationId, manifest)
        const all: Record<string, string | undefined> = Object.fromEntries(before.map((setting) => [setting.key, setting.value]))
        for (const [key, value] of writes) {
          const spec = manifest.env_vars.find((entry) => entry.key === key)!
          all[key] = (yield* resolvedAfter(spec, value, before.find((setting) => setting.key === key)!)).value
        }
        return all
      })

    return { ...traced("IntegrationSettings", { resolve, update, tryValues, processApiKey } as const), changes, environment } as const
  }),
  dependencies: [IntegrationsRepo.Default, ApiKeys.Default, Bus.Default]
}) {}
