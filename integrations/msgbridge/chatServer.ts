/**
 * The chat server's REST API (the BlueBubbles server's), through `cairn.http`: the password goes in
 * the `password` query parameter; answers are `{status, message, data}`.
 */
import { Schema } from "effect"
import type { IntegrationContext } from "../../src/sdk/index.ts"
import type { BridgeConfig } from "./config.ts"
import { ChatMessage, decodeOr } from "./message.ts"

export class ChatServerError extends Error {
  constructor(
    message: string,
    /** The server answered 401: the password is wrong. */
    readonly unauthorized = false,
    /** No answer came in time (the call may still have been carried out). */
    readonly timedOut = false
  ) {
    super(message)
  }
}

export interface ServerInfo {
  readonly private_api: boolean
  readonly helper_connected: boolean
  readonly server_version: string | null
}

const urlOf = (config: BridgeConfig, path: string) => {
  if (!config.serverUrl || !config.password) throw new ChatServerError("MSGBRIDGE_SERVER_URL and MSGBRIDGE_PASSWORD are not both set")
  return `${config.serverUrl}/api/v1/${path}?password=${encodeURIComponent(config.password)}`
}

const call = async (
  cairn: IntegrationContext,
  config: BridgeConfig,
  path: string,
  options: { method?: "GET" | "POST"; json?: unknown; timeoutMs?: number } = {}
) => {
  let response
  try {
    response = await cairn.http.request(urlOf(config, path), {
      method: options.method ?? "GET",
      ...(options.json === undefined ? {} : { json: options.json }),
      timeoutMs: options.timeoutMs ?? 10_000,
      retries: 0
    })
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error)
    // The password is in the URL: never let it into an error.
    const safe = config.password ? message.split(config.password).join("***") : message
    throw new ChatServerError(
      `The chat server did not answer ${path}: ${safe}`,
      false,
      /did not answer within|timed? ?out|abort/i.test(safe)
    )
  }
  if (response.status === 401) throw new ChatServerError("The chat server refused MSGBRIDGE_PASSWORD (401)", true)
  let body: { message?: unknown; data?: unknown; error?: { message?: unknown } } = {}
  try {
    body = response.json()
  } catch {
    // not JSON: said below
  }
  if (!response.ok) {
    const why = typeof body.error?.message === "string"
      ? body.error.message
      : typeof body.message === "string"
      ? body.message
      : response.text.slice(0, 200)
    throw new ChatServerError(`The chat server answered ${response.status} to ${path}: ${why}`)
  }
  return body.data
}

export const ping = async (cairn: IntegrationContext, config: BridgeConfig) => {
  await call(cairn, config, "ping")
}

export const serverInfo = async (cairn: IntegrationContext, config: BridgeConfig): Promise<ServerInfo> => {
  const data = (await call(cairn, config, "server/info")) as Record<string, unknown> | undefined
  return {
    private_api: data?.private_api === true,
    helper_connected: data?.helper_connected !== false,
    server_version: typeof data?.server_version === "string" ? data.server_version : null
  }
}

/** Sends a text; answers the server's message (its GUID). */
export const sendText = async (cairn: IntegrationContext, config: BridgeConfig, chatGuid: string, text: string, tempGuid: string) => {
  const data = await call(cairn, config, "message/text", {
    method: "POST",
    json: { chatGuid, tempGuid, message: text, method: config.sendMethod },
    timeoutMs: config.sendTimeoutMs
  })
  const decoded = decodeOr(ChatMessage, data)
  return decoded.ok ? decoded.value : null
}

const Messages = Schema.Array(Schema.Unknown)

/** Messages created after `after` (ms), oldest first, of one chat when given; undecodable ones are skipped. */
export const messagesAfter = async (
  cairn: IntegrationContext,
  config: BridgeConfig,
  after: number,
  options: { chatGuid?: string; limit?: number; offset?: number } = {}
): Promise<{ messages: Array<ChatMessage>; count: number }> => {
  const data = await call(cairn, config, "message/query", {
    method: "POST",
    json: {
      after,
      sort: "ASC",
      limit: options.limit ?? 100,
      offset: options.offset ?? 0,
      with: ["chat", "handle", "attachment"],
      ...(options.chatGuid ? { chatGuid: options.chatGuid } : {})
    }
  })
  const rows = decodeOr(Messages, data)
  if (!rows.ok) throw new ChatServerError(`The chat server's message query answered no list: ${rows.error}`)
  const messages: Array<ChatMessage> = []
  for (const row of rows.value) {
    const message = decodeOr(ChatMessage, row)
    if (message.ok) messages.push(message.value)
  }
  return { messages, count: rows.value.length }
}
