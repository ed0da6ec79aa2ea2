/**
 * Integration settings, declared by each manifest's env_vars. A value resolves as the stored
 * setting, then the environment variable, then the manifest default. Secret values are stored
 * encrypted and shown masked everywhere; a masked value sent back unchanged keeps the secret.
 */
import { SqlClient } from "@effect/sql"
import { Config, Effect, Option, PubSub } from "effect"
import { ApiKeys } from "../auth/keys/ApiKeys.ts"
import { CreateApiKey } from "../auth/keys/Model.ts"
import { presets } from "../auth/Scopes.ts"
import { ValidationError, ValidationIssue } from "../http/Errors.ts"
import { makeKeyVaultFor } from "../providers/KeyVault.ts"
import type { NormalizedManifest } from "./Manifest.ts"

export const MASK = "********"

export type SettingSource = "stored" | "environment" | "default" | "unset"

export interface ResolvedSetting {
  readonly key: string
  readonly value: string | undefined
  readonly source: SettingSource
  readonly secret: boolean
  readonly required: boolean
  readonly description: string
}

/** What a response may show: secrets are masked when set. */
export const shown = (setting: ResolvedSetting) => ({
  key: setting.key,
  value: setting.secret && setting.value !== undefined ? MASK : (setting.value ?? null),
  is_set: setting.value !== undefined,
  source: setting.source,
  secret: setting.secret,
  required: setting.required,
  description: setting.description
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

export class IntegrationSettings extends Effect.Service<IntegrationSettings>()("cairn/IntegrationSettings", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const vault = yield* makeKeyVaultFor("integration-settings")
    const apiKeys = yield* ApiKeys
    /** Announces an integration whose settings changed (the process manager restarts it). */
    const changes = yield* PubSub.unbounded<string>()

    // The environment as the server was configured (a .env file, or a test's own provider).
    const provider = yield* Effect.configProviderWith(Effect.succeed)
    const environment = (key: string) =>
      Config.option(Config.string(key)).pipe(
        Effect.map((value) => Option.getOrUndefined(Option.filter(value, (v) => v !== ""))),
        Effect.withConfigProvider(provider),
        Effect.orElseSucceed(() => undefined)
      )

    const stored = (integrationId: string) =>
      Effect.map(
        sql<{ key: string; value: string }>`SELECT key, value FROM integration_settings WHERE integration_id = ${integrationId}`,
        (rows) => new Map(rows.map((row) => [row.key, row.value]))
      )

    const resolve = (integrationId: string, manifest: NormalizedManifest) =>
      Effect.gen(function* () {
        const values = yield* stored(integrationId)
        return yield* Effect.forEach(manifest.env_vars, (spec) =>
          Effect.map(environment(spec.key), (fromEnv): ResolvedSetting => {
            const raw = values.get(spec.key)
            const storedValue = raw === undefined ? undefined : spec.secret ? vault.decrypt(raw) : raw
            const [value, source]: [string | undefined, SettingSource] =
              storedValue !== undefined
                ? [storedValue, "stored"]
                : fromEnv !== undefined
                  ? [fromEnv, "environment"]
                  : spec.default !== undefined
                    ? [spec.default, "default"]
                    : [undefined, "unset"]
            return { key: spec.key, value, source, secret: spec.secret, required: spec.required, description: spec.description }
          })
        )
      })

    /**
     * Stores new values: every key must be declared; null or "" forgets the stored value; a secret
     * sent back as the mask is left as it is. All or nothing.
     */
    const update = (integrationId: string, manifest: NormalizedManifest, values: Readonly<Record<string, unknown>>) =>
      Effect.gen(function* () {
        const specs = new Map(manifest.env_vars.map((spec) => [spec.key, spec]))
        const issues: Array<ValidationIssue> = []
        const writes: Array<readonly [string, string | null]> = []
        for (const [key, value] of Object.entries(values)) {
          const spec = specs.get(key)
          if (!spec) {
            issues.push(new ValidationIssue({ loc: ["body", key], msg: `${integrationId} declares no setting ${key}`, type: "unknown_setting" }))
            continue
          }
          if (value !== null && typeof value !== "string" && typeof value !== "number" && typeof value !== "boolean") {
            issues.push(new ValidationIssue({ loc: ["body", key], msg: "Expected a string, number, boolean or null", type: "type_error" }))
            continue
          }
          if (spec.secret && value === MASK) continue
          writes.push([key, value === null || value === "" ? null : String(value)])
        }
        if (issues.length > 0) return yield* new ValidationError({ detail: issues })
        yield* sql.withTransaction(
          Effect.forEach(
            writes,
            ([key, value]) =>
              value === null
                ? sql`DELETE FROM integration_settings WHERE integration_id = ${integrationId} AND key = ${key}`
                : sql`INSERT INTO integration_settings (integration_id, key, value, updated_at)
                      VALUES (${integrationId}, ${key}, ${specs.get(key)!.secret ? vault.encrypt(value) : value}, now())
                      ON CONFLICT (integration_id, key) DO UPDATE SET value = EXCLUDED.value, updated_at = now()`,
            { discard: true }
          )
        )
        yield* PubSub.publish(changes, integrationId)
        return yield* resolve(integrationId, manifest)
      })

    /**
     * The key the integration's process calls back with: created from the manifest's preset the
     * first time it is needed, then kept (encrypted) so restarts reuse it.
     */
    const processApiKey = (integrationId: string, manifest: NormalizedManifest) =>
      Effect.gen(function* () {
        const rows = yield* sql<{ api_key_id: string; key_value: string }>`SELECT api_key_id, key_value FROM integration_api_keys
                                                                            WHERE integration_id = ${integrationId}`
        const existing = rows[0] ? vault.decrypt(rows[0].key_value) : undefined
        if (rows[0] && existing) {
          const usable = yield* Effect.either(apiKeys.authenticate(existing))
          if (usable._tag === "Right") return existing
        }
        const presetId = manifest.api_key_preset ?? defaultKeyPreset
        const preset = presets.find((p) => p.id === presetId) ?? presets.find((p) => p.id === defaultKeyPreset)!
        const created = yield* apiKeys.create(new CreateApiKey({ name: `integration:${integrationId}`, scopes: preset.scopes }))
        yield* sql`INSERT INTO integration_api_keys (integration_id, api_key_id, key_value)
                   VALUES (${integrationId}, ${created.id}, ${vault.encrypt(created.key)})
                   ON CONFLICT (integration_id) DO UPDATE SET api_key_id = EXCLUDED.api_key_id, key_value = EXCLUDED.key_value, created_at = now()`
        return created.key
      })

    return { resolve, update, processApiKey, changes, environment } as const
  })
}) {}
