/**
 * Lifecycle hooks as the spec lists them: the contract (events, extra keys, context, callbacks) is
 * the SDK's (`src/sdk/Hooks.ts`), re-exported here for the core; this file adds the payload posted
 * to HOOK_WEBHOOK_URLS.
 */
import { Schema } from "effect"
import { hookEvents, JsonObject } from "../sdk/Hooks.ts"

export {
  type BroadcastCallback,
  type BroadcastEvent,
  type HookCallback,
  type HookContext,
  type HookEvent,
  hookEvents,
  type HookExtras,
  hookExtras,
  type HookIds,
  isHookEvent,
  type OverrideCallback,
  type OverrideEvent,
  type Unregister
} from "../sdk/Hooks.ts"

/** The JSON posted to each HOOK_WEBHOOK_URLS entry for every hook event. */
export const HookWebhookPayload = Schema.Struct({
  event: Schema.Literal(...hookEvents),
  /** ISO 8601 with an explicit offset (`+00:00`), taken when the event fired. */
  timestamp: Schema.String,
  context: Schema.Struct({
    bot_id: Schema.NullOr(Schema.String),
    session_id: Schema.NullOr(Schema.String),
    channel_id: Schema.NullOr(Schema.String),
    client_id: Schema.NullOr(Schema.String),
    correlation_id: Schema.NullOr(Schema.String)
  }),
  data: JsonObject
})
export type HookWebhookPayload = typeof HookWebhookPayload.Type

/** `2026-01-02T03:04:05.678+00:00`: ISO 8601 with the offset spelled out rather than `Z`. */
export const isoWithOffset = (date: Date): string => date.toISOString().replace(/Z$/, "+00:00")
