/**
 * What a long-running integration (a mail poller, a chat bridge) reaches through its `cairn`
 * context beyond hooks and routes: its persisted store, the LLM, its bound channels, agent runs,
 * and a guarded HTTP client. Types only: the live objects come from the server that loaded the
 * integration. Every call returns a promise; a refused argument rejects with a `TypeError`.
 */

// ---------------------------------------------------------------------------------------------
// Store

export interface StoreWriteOptions {
  /** The entry expires after this many milliseconds; without it, it stays until deleted. */
  readonly ttlMs?: number
}

/**
 * A bounded set that forgets its least recently used members beyond `capacity` (message-id dedup).
 * Kept in the database: it survives a restart and is shared by every server process.
 */
export interface LruSet {
  readonly name: string
  readonly capacity: number
  /**
   * Offers a member: true when it was new (it is now in the set, the least recently used beyond the
   * capacity evicted); false when it was already there (it becomes the most recently used). Atomic:
   * two processes offering the same member at once, one gets true.
   */
  readonly add: (member: string) => Promise<boolean>
  /** Whether the member is in the set (its place is not changed). */
  readonly has: (member: string) => Promise<boolean>
  readonly remove: (member: string) => Promise<boolean>
  /** The members, most recently used first. */
  readonly members: () => Promise<ReadonlyArray<string>>
}

/**
 * The integration's own key-value store, in the database (never a side file). Values are anything
 * JSON can carry; keys are 1 to 512 characters without NUL.
 */
export interface IntegrationStore {
  /** The live value, or undefined (never set, deleted, or expired). */
  readonly get: <T = unknown>(key: string) => Promise<T | undefined>
  readonly set: (key: string, value: unknown, options?: StoreWriteOptions) => Promise<void>
  /** Whether a live entry was deleted. */
  readonly delete: (key: string) => Promise<boolean>
  /**
   * Writes `next` only when the live value is still `expected` (compared as JSON text; undefined:
   * no live entry), in one statement. False when another writer got there first: a stale cursor
   * never overwrites a newer one.
   */
  readonly compareAndSet: (key: string, expected: unknown, next: unknown, options?: StoreWriteOptions) => Promise<boolean>
  /** Live keys starting with `prefix`, sorted, at most 1000. */
  readonly keys: (prefix?: string) => Promise<ReadonlyArray<string>>
  /** The LRU set of that name, bounded to `capacity` (1 to 1,000,000) members. */
  readonly lru: (name: string, capacity: number) => LruSet
}

// ---------------------------------------------------------------------------------------------
// LLM

export interface CompletionMessage {
  readonly role: "system" | "user" | "assistant"
  readonly content: string
}

export interface CompletionOptions {
  readonly messages: ReadonlyArray<CompletionMessage>
  /** "provider/model" or a model of the default provider; default: the server's DEFAULT_MODEL. */
  readonly model?: string
  readonly temperature?: number
  readonly maxTokens?: number
  /**
   * Ask for a JSON object (`response_format: json_object`, left out for a provider that refuses it)
   * and parse the answer into `json`. The answer is read tolerantly (the first JSON object in code
   * fences or prose, light repairs), and a model that answers no JSON is asked once more.
   */
  readonly json?: boolean
  /** With `json`: the shape wanted, as the model is told when it is asked again (an example object reads best). */
  readonly jsonShape?: string
  /** Tried in order when the model fails after its retries. */
  readonly fallbackModels?: ReadonlyArray<string>
}

export interface Completion {
  readonly content: string
  /** The model that answered (a fallback's when one was used). */
  readonly model: string
  readonly usage: { readonly prompt_tokens: number; readonly completion_tokens: number; readonly total_tokens: number } | null
  /** With `json: true`: the parsed answer (the call rejects when neither answer held JSON). */
  readonly json?: unknown
}

export interface TranscriptionOptions {
  /** An encoded audio file (wav, mp3, m4a, ogg, webm, flac). */
  readonly audio: Uint8Array
  /** Default "audio.wav". */
  readonly fileName?: string
  /** Default "audio/wav". */
  readonly mimeType?: string
  /** Default: the server's TRANSCRIPTION_MODEL. */
  readonly model?: string
}

/**
 * The server's LLM: the same providers, retries, fallbacks and usage records as
 * `/api/v1/llm/completions`; usage is recorded under the integration (`principal_kind`
 * "integration", `principal_id` its id).
 */
export interface IntegrationLlm {
  readonly complete: (options: CompletionOptions) => Promise<Completion>
  readonly transcribe: (options: TranscriptionOptions) => Promise<{ readonly text: string }>
}

// ---------------------------------------------------------------------------------------------
// Channels and runs

export interface BoundChannel {
  readonly channel: {
    readonly id: string
    readonly name: string
    readonly bot_id: string
    readonly client_id: string
    readonly require_mention: boolean
    readonly passive_memory: boolean
    readonly workspace_enabled: boolean
  }
  readonly binding: {
    readonly id: string
    readonly integration_type: string
    readonly client_id: string
    readonly wake_words: ReadonlyArray<string>
    /** Whether the bot's name and id count as wake words on this binding. */
    readonly use_bot_wake_word: boolean
    readonly hud_preset: "default" | "none"
  }
}

export interface IntegrationChannels {
  /**
   * The channels bound to this integration (its `integration_type`, else its id), oldest binding
   * first; only those of one client id when given.
   */
  readonly bound: (options?: { readonly clientId?: string }) => Promise<ReadonlyArray<BoundChannel>>
  /** Stores a message in the channel's session without running the bot (a passive message). */
  readonly storePassive: (
    channelId: string,
    content: string,
    options?: { readonly metadata?: Record<string, unknown> }
  ) => Promise<{ readonly message_id: string; readonly session_id: string }>
  /**
   * Writes a text file into a channel's workspace, with the workspace API's path rules. Only a
   * channel bound to this integration: any other is refused.
   */
  readonly writeFile: (channelId: string, path: string, content: string) => Promise<void>
}

export interface StartRunOptions {
  readonly channelId: string
  /** The message the bot answers; stored in the channel's session as the user's. */
  readonly content: string
  readonly executionConfig?: {
    readonly system_preamble?: string
    readonly skills?: ReadonlyArray<string>
    readonly tools?: ReadonlyArray<string>
    readonly model_override?: string
  }
  /**
   * Where the answer is delivered: default the dispatcher this integration registered (the only
   * one, or the one named after its integration type); "none" delivers nowhere.
   */
  readonly dispatchType?: string
  readonly dispatchConfig?: Record<string, unknown>
  /**
   * Deliver where the channel's session delivers (its `dispatch_config`, as a message injected
   * without a `dispatch_type`): a chat platform, a webhook, the bridge; nowhere when it names none.
   * `dispatchType` and `dispatchConfig` are then ignored.
   */
  readonly channelDispatch?: boolean
  /** Images stored with the message as its attachments: the model sees them with the content. */
  readonly images?: ReadonlyArray<RunImage>
  /** Stored with the message (who sent it, the external message id). */
  readonly metadata?: Record<string, unknown>
}

/** An image of a run's message: the file's bytes in standard base64 (no `data:` prefix). */
export interface RunImage {
  readonly mime_type: "image/png" | "image/jpeg" | "image/gif" | "image/webp"
  readonly name: string
  readonly data: string
}

export interface RunResult {
  readonly task_id: string
  readonly session_id: string
  readonly status: "complete" | "failed" | "cancelled"
  readonly result: string | null
  readonly error: string | null
}

/**
 * Agent runs for channel messages: the same engine as `/chat` (one run per session at a time, the
 * others queued), run as a task of the integration so a restart never loses or repeats it.
 */
export interface IntegrationRuns {
  /** Queues the run; answers at once. */
  readonly start: (
    options: StartRunOptions
  ) => Promise<{ readonly task_id: string; readonly session_id: string; readonly message_id: string }>
  /** Waits for a run started by `start` to finish (rejects after `timeoutMs`, default 10 minutes). */
  readonly result: (taskId: string, options?: { readonly timeoutMs?: number }) => Promise<RunResult>
  /** `start` then `result`. */
  readonly run: (options: StartRunOptions & { readonly timeoutMs?: number }) => Promise<RunResult>
  /** Cancels this integration's queued (not yet running) runs, of one channel when given; how many. */
  readonly cancelQueued: (options?: { readonly channelId?: string }) => Promise<number>
}

// ---------------------------------------------------------------------------------------------
// HTTP

export interface HttpRequestOptions {
  /** Default GET. */
  readonly method?: "GET" | "HEAD" | "POST" | "PUT" | "PATCH" | "DELETE" | "OPTIONS"
  readonly headers?: Record<string, string>
  /** A JSON body (sets content-type); or `body` for raw text or bytes. */
  readonly json?: unknown
  readonly body?: string | Uint8Array
  /** The whole exchange; default 10 s. */
  readonly timeoutMs?: number
  /** Retries of an idempotent call (GET, HEAD, PUT, DELETE, OPTIONS) after a network error, 429 or 5xx; default 2. Never for POST or PATCH. */
  readonly retries?: number
  /** Stop waiting and fail when this signal aborts (a worker passes its own). */
  readonly signal?: AbortSignal
}

export interface HttpResponse {
  readonly status: number
  readonly ok: boolean
  /** Lower-case names. */
  readonly headers: Record<string, string>
  readonly text: string
  /** The body as bytes (an image, a file). */
  readonly bytes: Uint8Array
  /** The body parsed as JSON (throws when it is not). */
  readonly json: <T = unknown>() => T
}

/**
 * Outbound HTTP with the guard the webhook dispatcher uses: a URL whose host resolves to a loopback,
 * private, link-local or metadata address is refused (before any connection) unless the server's
 * INTEGRATION_HTTP_ALLOWED_HOSTS allows it or one of the integration's own `*_URL` settings names
 * that host (settings only an admin can write). Redirects are not followed.
 */
export interface IntegrationHttp {
  readonly request: (url: string, options?: HttpRequestOptions) => Promise<HttpResponse>
}

// ---------------------------------------------------------------------------------------------
// Overview and todos (mission control)

/** What the server is doing, for a dashboard: read-only, across every channel. */
export interface Overview {
  readonly channels: ReadonlyArray<{
    readonly id: string
    readonly name: string
    readonly bot_id: string
    /** The newest message in any of the channel's sessions. */
    readonly last_activity_at: string | null
  }>
  readonly active_runs: ReadonlyArray<
    {
      readonly run_id: string
      readonly session_id: string
      readonly bot_id: string
      readonly channel_id: string | null
      readonly started_at: string
    }
  >
  readonly tasks: {
    readonly queued: number
    readonly running: number
    /** The newest failed tasks (at most 20). */
    readonly failed: ReadonlyArray<
      {
        readonly id: string
        readonly bot_id: string
        readonly channel_id: string | null
        readonly error: string | null
        readonly completed_at: string | null
      }
    >
  }
  readonly todos: ReadonlyArray<
    {
      readonly id: string
      readonly title: string
      readonly bot_id: string
      readonly channel_id: string | null
      readonly due_at: string | null
    }
  >
  readonly heartbeats: ReadonlyArray<{ readonly channel_id: string; readonly next_at: string }>
  readonly integrations: ReadonlyArray<{ readonly id: string; readonly status: string }>
}

export interface TodoItem {
  readonly id: string
  readonly title: string
  readonly notes: string
  readonly status: "open" | "done"
  readonly bot_id: string
  readonly channel_id: string | null
  readonly due_at: string | null
  readonly created_by: string
}

/** The bots' todos (the table the `todos` tool and /api/v1/todos use). */
export interface IntegrationTodos {
  readonly list: (
    filter?: { readonly botId?: string; readonly channelId?: string; readonly status?: "open" | "done"; readonly limit?: number }
  ) => Promise<ReadonlyArray<TodoItem>>
  readonly add: (
    todo: { readonly title: string; readonly notes?: string; readonly botId?: string; readonly channelId?: string; readonly dueAt?: string }
  ) => Promise<TodoItem>
  readonly complete: (id: string) => Promise<TodoItem>
}
