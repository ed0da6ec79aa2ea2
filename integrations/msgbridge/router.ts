/**
 * The bridge's routes. The webhook takes the shared secret MSGBRIDGE_WEBHOOK_TOKEN as `?token=`
 * (checked by the framework, in constant time, before the handler runs); the others need a key
 * with the scope they declare.
 */
import { defineRoutes, type IntegrationContext, respond } from "../../src/sdk/index.ts"
import { readConfig } from "./config.ts"
import { boundChannels, handleMessage, routeAll } from "./inbound.ts"
import { ChatMessage, decodeOr, WebhookEvent } from "./message.ts"
import { sendReply } from "./outbound.ts"
import { diagnose, hudStatus } from "./status.ts"
import { bridgeStore } from "./store.ts"

const firstOf = (value: string | ReadonlyArray<string> | undefined) => (typeof value === "string" ? value : value?.[0])

const invalid = (loc: Array<string>, msg: string) => respond(422, { detail: [{ loc, msg, type: "value_error" }] })

const webhook = async (request: { body: unknown }, cairn: IntegrationContext) => {
  const config = readConfig(await cairn.settings.all())
  const event = decodeOr(WebhookEvent, request.body)
  const store = bridgeStore(cairn.store)
  const paused = await store.paused()
  if (paused) {
    // Nothing stored; a new message is recorded `ignored` (paused) so no catch-up answers it after the pause.
    const message = event.ok && event.value.type === "new-message" ? decodeOr(ChatMessage, event.value.data) : undefined
    if (message?.ok) await handleMessage(cairn, message.value, "webhook", { config, paused })
    return { status: "ignored", reason: "paused" }
  }
  if (!event.ok) return invalid(["body"], event.error)
  if (event.value.type !== "new-message") return { status: "ignored", reason: "event-type", type: event.value.type }
  const message = decodeOr(ChatMessage, event.value.data)
  if (!message.ok) return invalid(["body", "data"], message.error)
  try {
    return await handleMessage(cairn, message.value, "webhook", { config, paused })
  } catch (error) {
    // Recorded in the ledger and not decided (one transaction, nothing done): the catch-up's resume tries again.
    const why = error instanceof Error ? error.message : String(error)
    cairn.logger.error(`Messaging bridge: message ${message.value.guid} could not be handled now: ${why}`)
    return respond(503, { detail: `The message could not be handled now (${why}); the bridge's catch-up will try again` })
  }
}

export default defineRoutes([
  {
    method: "POST",
    path: "/webhook",
    // The chat server's webhook URL carries the token (the framework checks it before the handler).
    secret: { setting: "MSGBRIDGE_WEBHOOK_TOKEN", query: "token" },
    description: "The chat server's webhook (?token=MSGBRIDGE_WEBHOOK_TOKEN): new-message events",
    handler: webhook
  },
  {
    method: "POST",
    path: "/pause",
    description: "Pauses the bridge: webhooks are acknowledged and ignored, nothing is stored",
    scope: "operations:write",
    handler: async (_request, cairn) => {
      await bridgeStore(cairn.store).setPaused(true)
      return { status: "paused" }
    }
  },
  {
    method: "POST",
    path: "/resume",
    description: "Resumes the bridge",
    scope: "operations:write",
    handler: async (_request, cairn) => {
      await bridgeStore(cairn.store).setPaused(false)
      return { status: "running" }
    }
  },
  {
    method: "POST",
    path: "/cancel-pending-tasks",
    description: "Cancels the bridge's queued runs (not the one running)",
    scope: "tasks:write",
    handler: async (_request, cairn) => ({ status: "ok", cancelled: await cairn.runs.cancelQueued() })
  },
  {
    method: "GET",
    path: "/diagnose",
    description: "Checks metadata, dispatcher, credentials and bindings; says what to fix",
    scope: "operations:read",
    handler: async (_request, cairn) => diagnose(cairn)
  },
  {
    method: "POST",
    path: "/simulate-webhook",
    description: "What a message in a chat would do, per bound channel; nothing is run or stored",
    scope: "operations:read",
    handler: async (request, cairn) => {
      const body = (request.body ?? {}) as { chat_guid?: unknown; text?: unknown; is_from_me?: unknown }
      if (typeof body.chat_guid !== "string" || body.chat_guid === "") return invalid(["body", "chat_guid"], "chat_guid is required")
      if (typeof body.text !== "string") return invalid(["body", "text"], "text is required")
      const config = readConfig(await cairn.settings.all())
      const channels = await boundChannels(cairn, body.chat_guid)
      const routes = await routeAll(cairn, channels, { text: body.text, fromMe: body.is_from_me === true }, config)
      return {
        chat_guid: body.chat_guid,
        status: channels.length === 0 ? "ignored" : routes.some((r) => r.decision.action === "run") ? "triggered" : "stored",
        ...(channels.length === 0 ? { reason: "unbound" } : {}),
        channels: routes.map(({ bound, decision }) => ({
          channel_id: bound.channel.id,
          name: bound.channel.name,
          bot_id: bound.channel.bot_id,
          require_mention: bound.channel.require_mention,
          ...decision
        }))
      }
    }
  },
  {
    method: "POST",
    path: "/test-send",
    description: "Sends a text to a chat through the outbound path (?chat_guid=&text=)",
    scope: "channels.messages:write",
    handler: async (request, cairn) => {
      const chatGuid = firstOf(request.query.chat_guid)
      const text = firstOf(request.query.text)
      if (!chatGuid) return invalid(["query", "chat_guid"], "chat_guid is required")
      if (!text) return invalid(["query", "text"], "text is required")
      try {
        return { status: "sent", ...(await sendReply(cairn, chatGuid, text)) }
      } catch (error) {
        return respond(502, { detail: error instanceof Error ? error.message : String(error) })
      }
    }
  },
  {
    method: "GET",
    path: "/hud/status",
    description: "The connection badge and pause state for the HUD (?channel_id= applies its binding's preset)",
    scope: "operations:read",
    handler: async (request, cairn) => hudStatus(cairn, firstOf(request.query.channel_id))
  }
])
