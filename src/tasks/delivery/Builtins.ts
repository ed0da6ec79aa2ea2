/**
 * The four built-in dispatchers: chatplatform (Slack Web API), webhook, internal, none.
 */
import { Effect, Runtime } from "effect"
import type { AllowList } from "../../http/Outbound.ts"
import type { Dispatcher, DispatchTask, PostMessageOptions } from "../../sdk/Dispatcher.ts"
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

/** chatplatform: Slack `chat.postMessage`, in the thread of `thread_ts` unless reply_in_thread is false. */
export const slackDispatcher = (settings: BuiltinSettings): Dispatcher => {
  const postMessage = async (dispatchConfig: Record<string, unknown>, message: string, options: PostMessageOptions) => {
    const channel = text(dispatchConfig.channel_id) ?? text(dispatchConfig.channel)
    const token = text(dispatchConfig.token)
    if (!channel) throw new Error("chatplatform dispatch_config needs channel_id")
    if (!token) throw new Error("chatplatform dispatch_config needs token")
    const inThread = (options.replyInThread ?? true) && dispatchConfig.reply_in_thread !== false
    const threadTs = text(dispatchConfig.thread_ts)
    const body: Record<string, unknown> = { channel, text: message }
    if (inThread && threadTs) body.thread_ts = threadTs
    if (options.username) body.username = options.username
    if (options.iconEmoji) body.icon_emoji = options.iconEmoji
    if (options.iconUrl) body.icon_url = options.iconUrl
    if (options.extraMetadata && Object.keys(options.extraMetadata).length > 0) {
      body.metadata = { event_type: "cairn_message", event_payload: options.extraMetadata }
    }
    const response = await fetch(`${settings.slackApiBaseUrl.replace(/\/$/, "")}/chat.postMessage`, {
      method: "POST",
      headers: { "content-type": "application/json; charset=utf-8", authorization: `Bearer ${token}` },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(settings.webhookTimeoutMs)
    })
    const answer = (await response.json().catch(() => ({}))) as { ok?: boolean; error?: string }
    if (!response.ok || answer.ok !== true) {
      throw new Error(`Slack chat.postMessage failed: ${answer.error ?? `HTTP ${response.status}`}`)
    }
    return true
  }
  return {
    postMessage,
    deliver: async (task, result, clientActions, extraMetadata) => {
      await postMessage(task.dispatch_config, deliveredText(task, result), {
        botId: task.bot_id,
        clientActions,
        extraMetadata: { task_id: task.id, ...extraMetadata }
      })
    }
  }
}

/** webhook: POST {task_id, session_id, status, result, client_actions} to `url`. */
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
        options
      )
    },
    postMessage: async (dispatchConfig, message, { botId, clientActions, extraMetadata }) => {
      await postJson(
        urlOf(dispatchConfig),
        { text: message, bot_id: botId ?? null, client_actions: clientActions ?? [], extra_metadata: extraMetadata ?? null },
        options
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
