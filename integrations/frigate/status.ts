/** What the routes answer: the worker's connection and counters, and a diagnosis of the setup. */
import type { IntegrationContext } from "../../src/sdk/index.ts"
import { readConfig } from "./config.ts"
import { frigateVersion } from "./snapshot.ts"
import { registered } from "./state.ts"
import { frigateStore } from "./store.ts"

type Check = "pass" | "fail"

export const status = async (cairn: IntegrationContext) => {
  const read = readConfig(await cairn.settings.all())
  const store = frigateStore(cairn.store)
  const [connection, stats] = await Promise.all([store.connection(), store.stats()])
  return {
    configured: read.ok,
    error: read.ok ? null : read.error,
    mqtt: connection ??
      { connected: false, broker: read.ok ? read.config.mqttUrl : null, topic: read.ok ? read.config.topic : null, at: null, error: null },
    filters: read.ok ? { ...read.config.filters, cooldown_seconds: read.config.cooldownMs / 1000, trigger: read.config.trigger } : null,
    counts: stats
  }
}

/** Checks the metadata, the settings, the broker connection, Frigate's HTTP API and the bindings. */
export const diagnose = async (cairn: IntegrationContext) => {
  const read = readConfig(await cairn.settings.all())
  const issues: Array<string> = []
  const meta: Check = registered.metadata ? "pass" : "fail"
  if (meta === "fail") {
    issues.push("The frigate metadata (client id prefix frigate:) is not registered: hooks.ts did not load; see the server log")
  }
  let settings: Check = "pass"
  let mqtt: Check = "fail"
  let frigate: Check = "fail"
  if (!read.ok) {
    settings = "fail"
    issues.push(`${read.error}: set FRIGATE_MQTT_URL to the broker Frigate publishes to (e.g. mqtt://127.0.0.1:1883)`)
  } else {
    const connection = await frigateStore(cairn.store).connection()
    if (connection?.connected && connection.broker === read.config.mqttUrl) mqtt = "pass"
    else issues.push(`Not subscribed to ${read.config.topic} on ${read.config.mqttUrl}${connection?.error ? `: ${connection.error}` : ""}`)
    const version = await frigateVersion(cairn, read.config)
    if (version.ok) frigate = "pass"
    else issues.push(`Frigate's HTTP API (snapshots): ${version.error}`)
  }
  const bound = await cairn.channels.bound()
  const bindings: Check = bound.length > 0 ? "pass" : "fail"
  if (bindings === "fail") {
    issues.push("No channel is bound: bind one with integration_type frigate and client_id frigate:<camera> (or frigate:*)")
  }
  const checks = { meta, settings, mqtt, frigate, bindings }
  const ready = Object.values(checks).every((c) => c === "pass")
  return { status: ready ? "ok" : "failing", ready, checks, issues }
}
