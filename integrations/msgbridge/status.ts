/**
 * What a person sees of the bridge: the connection badge and pause state for the HUD, and the
 * diagnosis (each check pass or fail, with what to do about a failure).
 *
 * HUD item shape (one per widget):
 *   {id, kind: "status", title, badge: {state, label}, detail, actions: [{id, label, method, path}],
 *    refresh_seconds}
 * `state` is not_configured, connected, failing or paused (the words of every status surface); the
 * route's own `connection` keeps the finer connected, disconnected or degraded. An action is called
 * on Cairn's API.
 */
import type { IntegrationContext } from "../../src/sdk/index.ts"
import { ping, serverInfo } from "./chatServer.ts"
import { type BridgeConfig, readConfig } from "./config.ts"
import { registered } from "./state.ts"
import { bridgeStore } from "./store.ts"

export type Connection = "connected" | "disconnected" | "degraded"

export const HUD_REFRESH_SECONDS = 30

/** connected: ping and server info answer, the helper is up (and the Private API when it is the send method). */
export const connectionOf = async (cairn: IntegrationContext, config: BridgeConfig): Promise<{ state: Connection; detail: string }> => {
  if (!config.serverUrl || !config.password) {
    return { state: "disconnected", detail: "MSGBRIDGE_SERVER_URL and MSGBRIDGE_PASSWORD are not both set" }
  }
  try {
    await ping(cairn, config)
  } catch (error) {
    return { state: "disconnected", detail: error instanceof Error ? error.message : String(error) }
  }
  try {
    const info = await serverInfo(cairn, config)
    if (!info.helper_connected) {
      return { state: "degraded", detail: "The chat server answers, but its helper is not connected: sending may fail" }
    }
    if (config.sendMethod === "private-api" && !info.private_api) {
      return { state: "degraded", detail: "MSGBRIDGE_SEND_METHOD is private-api but the chat server's Private API is off" }
    }
    return { state: "connected", detail: `Chat server ${info.server_version ?? ""}`.trim() }
  } catch (error) {
    return {
      state: "degraded",
      detail: `The chat server answers ping but not server info: ${error instanceof Error ? error.message : String(error)}`
    }
  }
}

/**
 * The badge in the words every status surface uses (docs/integrations.md, "Status"): not
 * configured, connected, failing (the chat server does not answer, or answers without its helper or
 * the Private API the send method needs; the detail says which) or paused.
 */
const badgeOf = (paused: boolean, connection: Connection, config: BridgeConfig) =>
  paused
    ? { state: "paused", label: "Paused" }
    : !config.serverUrl || !config.password
    ? { state: "not_configured", label: "Not configured" }
    : connection === "connected"
    ? { state: "connected", label: "Connected" }
    : { state: "failing", label: "Failing" }

export const hudStatus = async (cairn: IntegrationContext, channelId: string | undefined) => {
  const config = readConfig(await cairn.settings.all())
  const [connection, paused, bindings] = await Promise.all([
    connectionOf(cairn, config),
    bridgeStore(cairn.store).paused(),
    cairn.channels.bound()
  ])
  const binding = channelId ? bindings.find((b) => b.channel.id === channelId) : undefined
  const preset = binding?.binding.hud_preset ?? "default"
  const action = paused
    ? { id: "resume", label: "Resume", method: "POST", path: "/integrations/msgbridge/resume" }
    : { id: "pause", label: "Pause", method: "POST", path: "/integrations/msgbridge/pause" }
  const items = preset === "none"
    ? []
    : [
      {
        id: "bb-status",
        kind: "status",
        title: "Messages",
        badge: badgeOf(paused, connection.state, config),
        detail: connection.detail,
        actions: [action],
        refresh_seconds: HUD_REFRESH_SECONDS
      }
    ]
  return { connection: connection.state, paused, preset, items }
}

type Check = "pass" | "fail"

export const diagnose = async (cairn: IntegrationContext) => {
  const config = readConfig(await cairn.settings.all())
  const issues: Array<string> = []
  const meta: Check = registered.metadata ? "pass" : "fail"
  if (meta === "fail") {
    issues.push("The msgbridge metadata (client id prefix msgbridge:) is not registered: hooks.ts did not load; see the server log")
  }
  const dispatcher: Check = registered.dispatcher ? "pass" : "fail"
  if (dispatcher === "fail") {
    issues.push("The msgbridge dispatcher is not registered: replies cannot be sent; check dispatcher.ts in the server log")
  }
  let credentials: Check = "pass"
  if (!config.serverUrl || !config.password) {
    credentials = "fail"
    issues.push("Set MSGBRIDGE_SERVER_URL and MSGBRIDGE_PASSWORD (the chat server's address and API password)")
  } else {
    try {
      await ping(cairn, config)
    } catch (error) {
      credentials = "fail"
      issues.push(error instanceof Error ? error.message : String(error))
    }
  }
  if (!config.webhookToken) {
    credentials = "fail"
    issues.push("Set MSGBRIDGE_WEBHOOK_TOKEN and add ?token=<it> to the chat server's webhook URL: without it every webhook is refused")
  }
  const bound = await cairn.channels.bound()
  const bindings: Check = bound.length > 0 ? "pass" : "fail"
  if (bindings === "fail") issues.push("No channel is bound: bind one with integration_type msgbridge and client_id msgbridge:<chat guid>")
  const checks = { meta, dispatcher, credentials, bindings }
  const ready = Object.values(checks).every((c) => c === "pass")
  return { status: ready ? "ok" : "failing", ready, checks, issues }
}
