/**
 * The four built-in dispatchers: chatplatform (Slack Web API), webhook, internal, none.
 */
import { Effect, Runtime } from "effect"
import * as crypto from "node:crypto"
import type { AllowList } from "../../http/Outbound.ts"
import { type Dispatcher, type DispatchTask, type PostMessageOptions, UncertainDelivery } from "../../sdk/Dispatcher.ts"
import type { Injector } from "../Injection.ts"
import { postJson } from "./Webhook.ts"

export interface BuiltinSettings {
  readonly slackApiBaseUrl: string
  readonly webhookAllowed: AllowList
  readonly webhookTimeoutMs: number
}

const text = (value: unknown) => (typeof value === "string" && value.length > 0 ? value : undefined)

/** The text a finished task delivers: its result, or what went wrong. */
export const deliveredText = (task: DispatchTask, result: string) =>
  task.status === "complete" ? result : `The task failed: ${task.error ?? "unknown error"}`

/** How far Slack's clock may be behind ours when looking for a post made since an attempt began. */
const SLACK_CLOCK_SKEW_S = 5

/**
 * chatplatform: Slack `chat.postMessage`, in the thread of `thread_ts` unless reply_in_thread is
 * false. Each post carries a `client_msg_id` (a task's id for its result, so every retry of it has
 * the same). A post whose answer is lost (a timeout, a network error, a 5xx) may have arrived: the
 * channel (or thread) is read for that id before anything is retried. Found, it is delivered; read
 * and absent, the error stands (a retry posts it); unreadable, the outcome cannot be known and the
 * send is `UncertainDelivery` (never repeated).
 */
export const slackDispatcher = (settings: BuiltinSettings): Dispatcher => {
  const api = (method: string) => `${settings.slackApiBaseUrl.replace(/\/$/, "")}/${method}`

  /** Whether the channel (or thread) holds a message with `clientMsgId` posted since `sinceS`; undefined when it could not be read. */
  const posted = async (token: string, channel: string, threadTs: string | undefined, clientMsgId: string, sinceS: number) => {
    try {
      const query = new URLSearchParams({
        channel,
        oldest: String(sinceS - SLACK_CLOCK_SKEW_S),
        limit: "100",
        include_all_metadata: "true"
      })
      if (threadTs) query.set("ts", threadTs)
      const response = await fetch(`${api(threadTs ? "conversations.replies" : "conversations.history")}?${query}`, {
        headers: { authorization: `Bearer ${token}` },
        signal: AbortSignal.timeout(settings.webhookTimeoutMs)
      })
      const answer = (await response.json()) as {
        ok?: boolean
        messages?: ReadonlyArray<{ client_msg_id?: string; metadata?: { event_payload?: { task_id?: unknown } } }>
      }
      if (!response.ok || answer.ok !== true || !Array.isArray(answer.messages)) return undefined
      // A task's result also names the task in its message metadata, which Slack keeps for a bot's post.
      return answer.messages.some((m) => m.client_msg_id === clientMsgId || m.metadata?.event_payload?.task_id === clientMsgId)
    } catch {
      return undefined
    }
  }

  const post = async (
    dispatchConfig: Record<string, unknown>,
    message: string,
    options: PostMessageOptions,
    clientMsgId: string
  ) => {
    const channel = text(dispatchConfig.channel_id) ?? text(dispatchConfig.channel)
    const token = text(dispatchConfig.token)
    if (!channel) throw new Error("chatplatform dispatch_config needs channel_id")
    if (!token) throw new Error("chatplatform dispatch_config needs token")
    const inThread = (options.replyInThread ?? true) && dispatchConfig.reply_in_thread !== false
    const threadTs = text(dispatchConfig.thread_ts)
    const body: Record<string, unknown> = { channel, text: message, client_msg_id: clientMsgId }
    if (inThread && threadTs) body.thread_ts = threadTs
    if (options.username) body.username = options.username
    if (options.iconEmoji) body.icon_emoji = options.iconEmoji
    if (options.iconUrl) body.icon_url = options.iconUrl
    if (options.extraMetadata && Object.keys(options.extraMetadata).length > 0) {
      body.metadata = { event_type: "cairn_message", event_payload: options.extraMetadata }
    }
    const startedS = Date.now() / 1000
    /** The answer was lost: the post may be there. */
    const lost = async (why: string): Promise<true> => {
      const found = await posted(token, channel, inThread ? threadTs : undefined, clientMsgId, startedS)
      if (found === true) return true
      if (found === false) throw new Error(`Slack chat.postMessage failed: ${why}`)
      throw new UncertainDelivery(
        `Slack chat.postMessage failed (${why}) and whether the message arrived could not be checked; it is not sent again`
      )
    }
    let response: Response
    try {
      response = await fetch(api("chat.postMessage"), {
        method: "POST",
        headers: { "content-type": "application/json; charset=utf-8", authorization: `Bearer ${token}` },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(settings.webhookTimeoutMs)
      })
    } catch (error) {
      return lost(error instanceof Error ? error.message : String(error))
    }
    if (response.status >= 500) return lost(`HTTP ${response.status}`)
    const answer = (await response.json().catch(() => ({}))) as { ok?: boolean; error?: string }
    if (!response.ok || answer.ok !== true) {
      throw new Error(`Slack chat.postMessage failed: ${answer.error ?? `HTTP ${response.status}`}`)
    }
    return true
  }
  return {
    postMessage: (dispatchConfig, message, options) => post(dispatchConfig, message, options, crypto.randomUUID()),
    deliver: async (task, result, clientActions, extraMetadata) => {
      await post(
        task.dispatch_config,
        deliveredText(task, result),
        { botId: task.bot_id, clientActions, extraMetadata: { task_id: task.id, ...extraMetadata } },
        task.id
      )
    }
  }
}

/** webhook: POST {task_id, session_id, status, result, client_actions} to `url`, with an `Idempotency-Key`. */
export const webhookDispatcher = (settings: BuiltinSettings): Dispatcher => {
  const urlOf = (config: Record<string, unknown>) => {
    const url = text(config.url)
    if (!url) throw new Error("webhook dispatch_config needs url")
    return url
  }
  const options = { allowed: settings.webhookAllowed, timeoutMs: settings.webhookTimeoutMs }
  return {
    deliver: async (task, result, clientActions, extraMetadata) => {
      await postJson(
        urlOf(task.dispatch_config),
        {
          task_id: task.id,
          session_id: task.session_id,
          status: task.status,
          result: task.status === "complete" ? result : null,
          error: task.status === "failed" ? task.error : null,
          client_actions: clientActions ?? [],
          ...(extraMetadata ? { extra_metadata: extraMetadata } : {})
        },
        // One key per task: every retry of its delivery carries the same.
        { ...options, idempotencyKey: `task:${task.id}` }
      )
    },
    postMessage: async (dispatchConfig, message, { botId, clientActions, extraMetadata }) => {
      await postJson(
        urlOf(dispatchConfig),
        { text: message, bot_id: botId ?? null, client_actions: clientActions ?? [], extra_metadata: extraMetadata ?? null },
        { ...options, idempotencyKey: `message:${crypto.randomUUID()}` }
      )
      return true
    }
  }
}

/**
 * internal: the result becomes a user message in `dispatch_config.session_id` (metadata names the
 * task). It runs an agent turn there only with `dispatch_config.run_agent: true`; by default it
 * does not, so two sessions can never answer each other in a loop nobody asked for.
 */
export const internalDispatcher = (injector: Injector, runtime: Runtime.Runtime<never>): Dispatcher => {
  const inject = (config: Record<string, unknown>, content: string, source: string, extra: Record<string, unknown>) => {
    const target = text(config.session_id)
    if (!target) return Promise.reject(new Error("internal dispatch_config needs session_id"))
    return Runtime.runPromise(runtime)(
      injector
        .inject(target, { content, source, runAgent: config.run_agent === true, notify: false, extraMetadata: extra })
        .pipe(Effect.mapError((error) => new Error("detail" in error ? String(error.detail) : String(error))))
    )
  }
  return {
    deliver: async (task, result, clientActions, extraMetadata) => {
      await inject(task.dispatch_config, deliveredText(task, result), `task:${task.id}`, {
        ...extraMetadata,
        task_id: task.id,
        from_session_id: task.session_id,
        ...(clientActions && clientActions.length > 0 ? { client_actions: clientActions } : {})
      })
    },
    postMessage: async (dispatchConfig, message, { botId, extraMetadata }) => {
      await inject(dispatchConfig, message, `bot:${botId ?? "unknown"}`, { ...extraMetadata })
      return true
    }
  }
}

/** none: the result stays on the task; the caller polls. */
export const noneDispatcher: Dispatcher = {
  deliver: (_task, _result, _clientActions, _extraMetadata) => undefined,
  postMessage: (_dispatchConfig, _text, _options) => false
}
