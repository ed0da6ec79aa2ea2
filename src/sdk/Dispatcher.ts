/**
 * The dispatcher contract: how a finished task's result reaches its destination. The spec's
 * `deliver(task, result, client_actions, extra_metadata)` and `post_message(dispatch_config, text,
 * *, bot_id, reply_in_thread=True, username, icon_emoji, icon_url, client_actions, extra_metadata)`
 * in TypeScript: keyword-only parameters become one options object.
 */
import { Data } from "effect"

/** What a dispatcher sees of a task (secrets in `dispatch_config` are in the clear here). */
export interface DispatchTask {
  readonly id: string
  readonly status: "complete" | "failed"
  readonly bot_id: string
  readonly session_id: string
  readonly channel_id: string | null
  readonly source: string
  readonly prompt: string
  readonly result: string | null
  readonly error: string | null
  readonly dispatch_type: string
  readonly dispatch_config: Record<string, unknown>
}

export interface PostMessageOptions {
  readonly botId?: string | undefined
  /** Default true. */
  readonly replyInThread?: boolean | undefined
  readonly username?: string | undefined
  readonly iconEmoji?: string | undefined
  readonly iconUrl?: string | undefined
  readonly clientActions?: ReadonlyArray<unknown> | null | undefined
  readonly extraMetadata?: Record<string, unknown> | null | undefined
}

export interface Dispatcher {
  /**
   * Called when a task of this dispatch type finishes. A throw or rejection is a failed delivery
   * (retried), except an `UncertainDelivery` (recorded `uncertain`, never repeated).
   */
  readonly deliver: (
    task: DispatchTask,
    result: string,
    clientActions: ReadonlyArray<unknown> | null,
    extraMetadata: Record<string, unknown> | null
  ) => void | Promise<void>
  /** A message outside a task's result (delegation, heartbeat); answers whether it was posted. */
  readonly postMessage: (
    dispatchConfig: Record<string, unknown>,
    text: string,
    options: PostMessageOptions
  ) => boolean | Promise<boolean>
}

/**
 * A dispatcher that does not meet the contract; thrown at registration (an `Error`, so plain
 * integration code can catch it and read its message). The SDK's index re-exports only types, so
 * an integration still loads nothing at run time.
 */
export class DispatcherContractError extends Data.TaggedError("DispatcherContractError")<{ readonly message: string }> {}

/**
 * What a dispatcher throws when a send may or may not have arrived: it timed out or failed, and
 * whether the peer has it could not be checked. The delivery is recorded `uncertain` and not
 * repeated, since repeating it could show the person the message twice. Recognised by its `name`,
 * so an integration may also throw any Error named "UncertainDelivery".
 */
export class UncertainDelivery extends Error {
  override readonly name = "UncertainDelivery"
}

export const isUncertainDelivery = (error: unknown): boolean => error instanceof Error && error.name === "UncertainDelivery"

// ---------------------------------------------------------------------------------------------
// Bound channels: where their messages go, and who a message is shown as there

/** A channel bound to an integration, as the integration's dispatch rule sees it. */
export interface BoundTarget {
  /** The binding's client id, `<prefix><external id>`. */
  readonly client_id: string
  /** The client id without the integration's prefix: the chat, the Slack channel, the address. */
  readonly external_id: string
  readonly channel_id: string
  readonly bot_id: string
  /** The channel's free-form `integration_config`. */
  readonly integration_config: Record<string, unknown>
}

/**
 * The rule for a bound channel's dispatch config: the `dispatch_config` of the integration's
 * dispatcher that reaches this channel's conversation, or null when it cannot be reached (nothing
 * is posted). A throw or rejection counts as null and is logged.
 */
export type BoundDispatchRule = (
  target: BoundTarget
) => Record<string, unknown> | null | Promise<Record<string, unknown> | null>

/** Who a message posted on someone's behalf comes from: a bot (a delegated answer) or a person. */
export interface Speaker {
  readonly kind: "bot" | "user"
  readonly id: string
  /** The bot's `name` (a person's display name). */
  readonly name: string
}

/** The payload fields a post carries so the platform shows it as its speaker (Slack's `username`, `icon_url`). */
export interface Attribution {
  readonly username: string
  readonly icon_url?: string
}
