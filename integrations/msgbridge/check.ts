/** Test connection (the settings form's button): ping the chat server with the settings as given, then read its info. */
import type { IntegrationContext } from "../../src/sdk/index.ts"
import { ping, serverInfo } from "./chatServer.ts"
import { readConfig } from "./config.ts"

export const checkConnection = async (cairn: IntegrationContext, settings: Readonly<Record<string, string | undefined>>) => {
  const config = readConfig(settings)
  if (!config.serverUrl || !config.password) throw new Error("Set MSGBRIDGE_SERVER_URL and MSGBRIDGE_PASSWORD first")
  await ping(cairn, config)
  const info = await serverInfo(cairn, config)
  const version = info.server_version ? ` (version ${info.server_version})` : ""
  if (!info.helper_connected) return `The chat server answers${version}, but its helper is not connected: sending may fail`
  return `The chat server answers${version}; its helper is connected${info.private_api ? ", the Private API is on" : ""}`
}
