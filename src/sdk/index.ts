/**
 * The integration SDK: the only part of Cairn an integration imports. It holds the types of the
 * file contract and small `define*` helpers; the live API (`IntegrationContext`) is handed to each
 * integration by the loader, bound to the server that loaded it, so integrations need no Effect
 * and no access to Cairn's internals.
 *
 * The files of an integration (folder name = its id):
 *   index.ts       optional `id`, `name`, `version`
 *   router.ts      `export default defineRoutes([...])`, mounted at /integrations/<id>/
 *   hooks.ts       `export default defineHooks((cairn) => { cairn.registerHook(...); cairn.registerMetadata(...) })`
 *   dispatcher.ts  `export default defineDispatchers((cairn) => cairn.registerDispatcher("type", {...}))`
 *   process.ts     `export const DESCRIPTION`, `CMD` (string[]), `REQUIRED_ENV` (string[])
 *   worker.ts      `export default defineWorker({...})` (or a list of them): supervised long-running work
 *   setup.ts       `export const SETUP = defineSetup({...})`
 *   config.ts      the integration's own settings, read through `cairn.settings`
 *   tools/*.ts     `export default defineTool({...})`; files starting with `_` are not loaded
 *   skills/*.md    skill documents, id `integrations/<id>/<stem>`
 *   carapaces/*.yaml  capability bundles
 */

import type {
  IntegrationChannels,
  IntegrationHttp,
  IntegrationLlm,
  IntegrationRuns,
  IntegrationStore,
  IntegrationTodos,
  Overview
} from "./Capabilities.ts"
import type { Attribution, BoundDispatchRule, Dispatcher, Speaker } from "./Dispatcher.ts"
import type { HookCallback, HookEvent, Unregister } from "./Hooks.ts"
import type { IntegrationInbound } from "./Inbound.ts"
import type { EnvVarSpec } from "./Settings.ts"
import type { WorkerDefinition } from "./Worker.ts"

export type {
  BoundChannel,
  Completion,
  CompletionMessage,
  CompletionOptions,
  HttpRequestOptions,
  HttpResponse,
  IntegrationChannels,
  IntegrationHttp,
  IntegrationLlm,
  IntegrationRuns,
  IntegrationStore,
  IntegrationTodos,
  LruSet,
  Overview,
  RunImage,
  RunResult,
  StartRunOptions,
  StoreWriteOptions,
  TodoItem,
  TranscriptionOptions
} from "./Capabilities.ts"
export type {
  InboundEntry,
  InboundReceipt,
  InboundState,
  IntegrationInbound,
  PassiveStore,
  ReceiveOptions,
  RouteResult
} from "./Inbound.ts"
export type { ContactState, WorkerContext, WorkerState } from "./Worker.ts"

// ---------------------------------------------------------------------------------------------
// Hooks

/**
 * The hook contract is the core's own (`./Hooks.ts`: one declaration of the events, their extra
 * keys and the callbacks). Types only here, so integrations load nothing of it at run time.
 */
export type {
  BroadcastCallback,
  BroadcastEvent,
  HookCallback,
  HookContext,
  HookEvent,
  HookExtras,
  HookIds,
  OverrideCallback,
  OverrideEvent,
  Unregister
} from "./Hooks.ts"

// ---------------------------------------------------------------------------------------------
// Tools

export interface ToolSchema {
  readonly type: "function"
  readonly function: {
    readonly name: string
    readonly description?: string
    readonly parameters: {
      readonly type: "object"
      readonly properties: Record<string, unknown>
      readonly required?: ReadonlyArray<string>
    }
  }
}

export interface ToolCallContext {
  readonly botId: string
  readonly sessionId: string
  readonly channelId: string | null
  readonly clientId: string
  readonly correlationId: string
  /** Aborted when the call is given up (its timeout, a cancelled run): stop the tool's work then. */
  readonly signal?: AbortSignal
}

/**
 * What a call does beyond answering: `read` changes nothing and sends nothing out; `write` changes
 * what the server or the integration keeps; `egress` reaches or changes something outside (a
 * message sent, an API called). Undeclared is `egress`: the class checked most carefully (a bot
 * may be stopped from calling it while untrusted content is in its context).
 */
export type ToolEffectClass = "read" | "write" | "egress"

export interface ToolDefinition {
  readonly schema: ToolSchema
  /** Returns a string (commonly JSON text); the signal in the context aborts when the call is given up. */
  readonly execute: (args: Record<string, any>, context: ToolCallContext) => string | Promise<string>
  readonly effect?: ToolEffectClass
  readonly timeoutMs?: number
}

export const defineTool = (tool: ToolDefinition): ToolDefinition => tool

// ---------------------------------------------------------------------------------------------
// Routes

export type HttpMethod = "GET" | "POST" | "PUT" | "PATCH" | "DELETE"

export interface RouteRequest {
  /** Path parameters (`/items/:id` → `{ id }`). */
  readonly params: Record<string, string>
  readonly query: Record<string, string | ReadonlyArray<string>>
  /** The JSON body, or undefined. */
  readonly body: unknown
  readonly headers: Record<string, string | undefined>
}

export interface RouteResponse {
  readonly status?: number
  readonly body?: unknown
  readonly headers?: Record<string, string>
}

/**
 * The shared secret a peer (a chat server's webhook, say) sends instead of a key: the value of one
 * of the integration's own settings, declared `secret: true` in its SETUP, carried in a header or a
 * query parameter (either, when both are named). The framework compares it in constant time before
 * the handler runs and answers 401 when it is missing, wrong, or the setting is not set.
 */
export type RouteSecret =
  | { readonly setting: string; readonly header: string; readonly query?: string; readonly signature?: never }
  | { readonly setting: string; readonly header?: string; readonly query: string; readonly signature?: never }
  | { readonly setting: string; readonly signature: RouteSignature; readonly header?: never; readonly query?: never }

/**
 * A body signed with the shared secret instead of the secret itself (GitHub's, Gitea's and
 * Forgejo's `X-Hub-Signature-256: sha256=<hex>`): the peer sends `prefix` followed by the hex
 * HMAC-SHA256 of the raw request body, keyed with the setting's value, in `header`. The framework
 * computes it over the body's bytes as received and compares in constant time before the handler runs.
 */
export interface RouteSignature {
  readonly header: string
  /** What precedes the hex digest in the header, e.g. `sha256=`; default none. */
  readonly prefix?: string
}

interface RouteBase {
  readonly method: HttpMethod
  /** Relative to /integrations/<id>; may hold `:params`. */
  readonly path: string
  readonly description: string
  /** A plain object is sent as JSON with status 200; a RouteResponse sets status and headers. */
  readonly handler: (request: RouteRequest, cairn: IntegrationContext) => unknown | Promise<unknown>
}

/** A route called with a key that holds `scope` (omitted: `admin`). */
export interface KeyRoute extends RouteBase {
  readonly scope?: string
  readonly secret?: never
}

/** A route called with the shared secret `secret` names instead of a key (a webhook). */
export interface SharedSecretRoute extends RouteBase {
  readonly secret: RouteSecret
  readonly scope?: never
}

/** Every route needs a key or a shared secret: there is no unchecked public route. */
export type RouteDefinition = KeyRoute | SharedSecretRoute

export const defineRoutes = (routes: ReadonlyArray<RouteDefinition>): ReadonlyArray<RouteDefinition> => routes

/** Marks a handler result as a full response (status, headers) rather than a JSON body. */
export const respond = (
  status: number,
  body?: unknown,
  headers?: Record<string, string>
): RouteResponse & { readonly __response: true } => ({
  status,
  body,
  ...(headers ? { headers } : {}),
  __response: true
})

/**
 * What Cairn throws when a call refuses its arguments (a store key with NUL, a document title past
 * its limit): a `TypeError`, so `error.name` says so. Thrown out of a route's handler (the caller's
 * input passed on), the route answers 422 with its message rather than 500; a handler may throw
 * one itself for the same answer.
 */
export class InvalidArgument extends TypeError {
  readonly invalidArgument = true
}

/** Whether a thrown value is Cairn's refusal of an argument (see `InvalidArgument`). */
export const isInvalidArgument = (error: unknown): error is InvalidArgument =>
  typeof error === "object" && error !== null && (error as { invalidArgument?: unknown }).invalidArgument === true

// ---------------------------------------------------------------------------------------------
// Dispatchers

/**
 * The dispatcher contract is the core's own (one definition: what the registry checks is what
 * integrations implement). Types only, so integrations still load nothing of the core at run time.
 */
export type { Attribution, BoundDispatchRule, BoundTarget, Dispatcher, DispatchTask, PostMessageOptions, Speaker } from "./Dispatcher.ts"
export { UncertainDelivery } from "./Dispatcher.ts"
export { readSettings, settingProblem, SettingType } from "./Settings.ts"
export type { EnvVarSpec, SettingKind, SettingsRead, SettingsValues } from "./Settings.ts"

// ---------------------------------------------------------------------------------------------
// Metadata, settings manifest, process manifest

export interface IntegrationMetadata {
  readonly integration_type: string
  /** Client ids of this integration's channels start with it, e.g. `msgbridge:`. */
  readonly client_id_prefix: string
  /**
   * Who a message posted in this integration's conversations on someone's behalf is shown as (a
   * delegated bot's answer: `userId` is the bot's id): the `username` and `icon_url` its dispatcher's
   * `postMessage` receives. None, or null: the speaker's name, no icon.
   */
  readonly user_attribution?: (userId: string, speaker: Speaker) => Attribution | null
  /** A readable name for one of its client ids (the chat's, the channel's), shown with a mirrored message. */
  readonly display_name?: (clientId: string) => string | null | Promise<string | null>
  /** The dispatch type that reaches its channels (see `dispatch_config`); default `integration_type`. */
  readonly dispatch_type?: string
  /**
   * The rule for the dispatch config of a channel bound to this integration: how a message that
   * belongs in that channel's conversation (a delegated bot's answer) reaches it through the
   * dispatcher of `dispatch_type`. Without it, such messages are not posted to its channels.
   */
  readonly dispatch_config?: BoundDispatchRule
}

export interface SidebarItem {
  readonly label: string
  readonly href: string
  readonly icon?: string
}

export interface SetupManifest {
  readonly env_vars?: ReadonlyArray<EnvVarSpec>
  readonly webhook?: { readonly path: string; readonly description?: string }
  readonly sidebar_section?: {
    readonly id: string
    readonly title?: string
    readonly icon?: string
    readonly items: ReadonlyArray<SidebarItem>
    readonly readiness_endpoint?: string
    readonly readiness_field?: string
  }
  readonly dashboard_modules?: ReadonlyArray<
    { readonly id: string; readonly label: string; readonly icon?: string; readonly description?: string }
  >
  /** Carapaces injected for this integration's channels, and the workspace templates it fits. */
  readonly activation?: { readonly carapaces?: ReadonlyArray<string>; readonly templates?: ReadonlyArray<string> }
  /** The key preset (see the scope catalogue) the process's AGENT_API_KEY is created from. */
  readonly api_key_preset?: string
  /**
   * The chat header's status widget (HUD) of a channel bound to this integration with the HUD preset
   * `default`: the route the web app polls (with `?channel_id=`), answering `{items: [{id, kind:
   * "status", title, badge: {state, label}, detail, actions: [{id, label, method, path}],
   * refresh_seconds}]}`.
   */
  readonly hud?: { readonly status_endpoint: string }
  /**
   * The settings form's **Test connection**: tries the settings as the form holds them (saved or
   * not), answering what it found ("Logged in; 12 folders") or throwing why it failed.
   */
  readonly check?: (cairn: IntegrationContext, settings: Readonly<Record<string, string | undefined>>) => Promise<string>
}

/** Keeps the literal types of the manifest, so `readSettings(SETUP, …)` knows each setting's type. */
export const defineSetup = <const S extends SetupManifest>(setup: S): S => setup

// ---------------------------------------------------------------------------------------------
// The live API handed to an integration

export interface IntegrationLogger {
  readonly debug: (message: string, data?: Record<string, unknown>) => void
  readonly info: (message: string, data?: Record<string, unknown>) => void
  readonly warn: (message: string, data?: Record<string, unknown>) => void
  readonly error: (message: string, data?: Record<string, unknown>) => void
}

export interface DocumentMatch {
  readonly id: string
  readonly title: string
  readonly score: number
  readonly [key: string]: unknown
}

export interface InjectOptions {
  readonly source?: string
  readonly runAgent?: boolean
  readonly notify?: boolean
  readonly executionConfig?: {
    readonly system_preamble?: string
    readonly skills?: ReadonlyArray<string>
    readonly tools?: ReadonlyArray<string>
    readonly model_override?: string
  }
}

export interface IntegrationContext {
  /** The integration's id (its folder name). */
  readonly id: string
  readonly logger: IntegrationLogger
  /** An unknown event or a callback that is not a function is refused (a TypeError). */
  readonly registerHook: <E extends HookEvent>(event: E, callback: HookCallback<NoInfer<E>>) => Unregister
  readonly registerMetadata: (metadata: IntegrationMetadata) => void
  readonly registerDispatcher: (dispatchType: string, dispatcher: Dispatcher) => void
  /** Settings: the stored value, then the environment variable, then the manifest default. */
  readonly settings: {
    readonly get: (key: string) => Promise<string | undefined>
    readonly all: () => Promise<Record<string, string | undefined>>
  }
  readonly ingestDocument: (
    integrationId: string,
    title: string,
    content: string,
    sessionId?: string | null,
    metadata?: Record<string, unknown>
  ) => Promise<string>
  readonly searchDocuments: (q: string, integrationId?: string, limit?: number) => Promise<ReadonlyArray<DocumentMatch>>
  readonly getOrCreateSession: (clientId: string, botId?: string, dispatchConfig?: Record<string, unknown>) => Promise<string>
  readonly injectMessage: (
    sessionId: string,
    content: string,
    options?: InjectOptions
  ) => Promise<{ readonly message_id: string; readonly session_id: string; readonly task_id: string | null }>
  readonly workspace: {
    readonly list: (channelId: string) => Promise<ReadonlyArray<{ readonly path: string; readonly size: number }>>
    readonly read: (channelId: string, path: string) => Promise<string>
    readonly write: (channelId: string, path: string, content: string) => Promise<void>
    readonly remove: (channelId: string, path: string) => Promise<void>
  }
  /** Bot lookup, as the spec allows dispatchers. */
  readonly getBot: (botId: string) => Promise<{ readonly id: string; readonly name: string } | null>
  /** Registers a worker (as `worker.ts` does); only while the integration loads (from `hooks.ts`). */
  readonly registerWorker: (worker: Worker) => void
  /** The integration's persisted key-value store and LRU sets. */
  readonly store: IntegrationStore
  /** Completions and transcription through the server's providers; usage recorded under the integration. */
  readonly llm: IntegrationLlm
  /** The channels bound to this integration: lookup, passive messages, workspace files. */
  readonly channels: IntegrationChannels
  /** Agent runs for channel messages, delivered through the integration's dispatcher. */
  readonly runs: IntegrationRuns
  /** Outbound HTTP with timeouts, retries of idempotent calls and the private-address guard. */
  readonly http: IntegrationHttp
  /** What the server is doing across every channel (runs, tasks, todos, heartbeats, integrations). */
  readonly overview: () => Promise<Overview>
  /** The bots' todos. */
  readonly todos: IntegrationTodos
  /** The inbound ledger: record each item once before answering its source, decide it once. */
  readonly inbound: IntegrationInbound
}

/** A worker of this SDK: its `run` receives the integration's `cairn` context. */
export type Worker = WorkerDefinition<IntegrationContext>

export const defineWorker = (worker: Worker): Worker => worker

export const defineHooks = (register: (cairn: IntegrationContext) => void | Promise<void>) => register
export const defineDispatchers = (register: (cairn: IntegrationContext) => void | Promise<void>) => register
