/** The integration's settings as the code uses them (defaults and checks live in setup.ts). */
import { readSettings } from "../../src/sdk/index.ts"
import { SETUP } from "./setup.ts"

export interface Filters {
  /** Empty: any. */
  readonly cameras: ReadonlyArray<string>
  readonly labels: ReadonlyArray<string>
  readonly zones: ReadonlyArray<string>
  readonly minScore: number
}

export interface FrigateConfig {
  readonly mqttUrl: string
  readonly username: string | undefined
  readonly password: string | undefined
  readonly topic: string
  readonly clientId: string
  readonly frigateUrl: string | undefined
  readonly filters: Filters
  readonly cooldownMs: number
  readonly trigger: "new" | "end"
  readonly model: string | undefined
  readonly snapshotTimeoutMs: number
}

export const readConfig = (
  settings: Readonly<Record<string, string | undefined>>
): { readonly ok: true; readonly config: FrigateConfig } | { readonly ok: false; readonly error: string } => {
  const read = readSettings(SETUP, settings)
  if (!read.ok) return read
  const v = read.values
  return {
    ok: true,
    config: {
      mqttUrl: v.FRIGATE_MQTT_URL,
      username: v.FRIGATE_MQTT_USERNAME || undefined,
      password: v.FRIGATE_MQTT_PASSWORD || undefined,
      topic: v.FRIGATE_MQTT_TOPIC,
      clientId: v.FRIGATE_MQTT_CLIENT_ID,
      frigateUrl: v.FRIGATE_URL || undefined,
      filters: {
        cameras: v.FRIGATE_CAMERAS ?? [],
        labels: v.FRIGATE_LABELS ?? [],
        zones: v.FRIGATE_ZONES ?? [],
        minScore: v.FRIGATE_MIN_SCORE
      },
      cooldownMs: v.FRIGATE_COOLDOWN_SECONDS * 1000,
      trigger: v.FRIGATE_TRIGGER,
      model: v.FRIGATE_MODEL || undefined,
      snapshotTimeoutMs: v.FRIGATE_SNAPSHOT_TIMEOUT_MS
    }
  }
}
