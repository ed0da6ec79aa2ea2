/**
 * The SDK's capabilities for long-running integrations, as effects over Cairn's services: the
 * persisted store, LLM access, bound channels, agent runs and guarded HTTP. `Context.ts` turns them
 * into the promises integration code sees; argument checks that need no service live there.
 */
import { Config, Data, Duration, Effect, Option, Schema } from "effect"
import { injectionOrigin } from "../agent/Provenance.ts"
import { Bindings } from "../bindings/Bindings.ts"
import { isUuid } from "../contract/Params.ts"
import { type AllowList, allowList, guardedRequest, OutboundRefused } from "../http/Outbound.ts"
import { Inbound } from "../inbound/Inbound.ts"
import { Intake } from "../intake/Intake.ts"
import { completeJson } from "../providers/JsonCompletion.ts"
import { Llm } from "../providers/Llm.ts"
import type { ChatRequest, LlmError, UsageContext } from "../providers/Model.ts"
import type {
  BoundChannel,
  Completion,
  CompletionOptions,
  HttpRequestOptions,
  HttpResponse,
  IntegrationTodos,
  Overview,
  RunResult,
  StartRunOptions,
  TodoItem,
  TranscriptionOptions
} from "../sdk/Capabilities.ts"
import { Sessions } from "../sessions/Sessions.ts"
import { formatOfUpload, prepareFile } from "../speech/Audio.ts"
import { Speech } from "../speech/Speech.ts"
import { Injector } from "../tasks/Injection.ts"
import { Tasks } from "../tasks/Tasks.ts"
import { CreateTodo } from "../todos/Model.ts"
import { Todos } from "../todos/Todos.ts"
import { Workspaces } from "../workspaces/Workspaces.ts"
import { failureMessage } from "./Context.ts"
import { inboundCapability } from "./InboundCapability.ts"
import { OverviewRepo } from "./OverviewRepo.ts"
import { IntegrationStoreRepo } from "./Repo.ts"

/** A call an integration made that Cairn refuses or that failed; its message is what the integration's catch sees. */
export class IntegrationCallFailed extends Data.TaggedError("IntegrationCallFailed")<{ readonly message: string }> {}

const capabilitiesConfig = Config.all({
  httpAllowedHosts: Config.string("INTEGRATION_HTTP_ALLOWED_HOSTS").pipe(Config.withDefault("")),
  runResultTimeoutMs: Config.integer("INTEGRATION_RUN_TIMEOUT_MS").pipe(Config.withDefault(600_000))
})

/** Who is calling: the integration, as the capabilities need to know it. */
export interface CallerIdentity {
  readonly id: string
  /** Its metadata's integration_type, else its id. */
  readonly integrationType: () => string
  /** The dispatch types it registered. */
  readonly dispatchTypes: () => ReadonlyArray<string>
  /** The hosts its own `*_URL` settings name (allowed through the HTTP guard). */
  readonly configuredHosts: () => Effect.Effect<ReadonlyArray<string>, unknown>
  /** Every integration found at startup with its status (ready, partial, not_configured, failed). */
  readonly integrationStatuses: () => Effect.Effect<ReadonlyArray<{ readonly id: string; readonly status: string }>, unknown>
}

const idempotent = new Set(["GET", "HEAD", "PUT", "DELETE", "OPTIONS"])
/** Backoff between retries of an idempotent HTTP call: 250 ms, 500 ms, 1 s, … with jitter. */
const httpRetryDelay = (attempt: number) => Duration.millis(Math.round(250 * 2 ** attempt * (0.5 + Math.random() / 2)))

/** Any JSON value: what the integration asked for is its own to check (the SDK has no Schema). */
const AnyJson = Schema.Unknown

const llmFailure = (error: LlmError) => new IntegrationCallFailed({ message: `LLM call failed (${error.kind}): ${error.detail}` })

export class IntegrationCapabilities extends Effect.Service<IntegrationCapabilities>()("cairn/IntegrationCapabilities", {
  effect: Effect.gen(function*() {
    const config = yield* capabilitiesConfig
    const store = yield* IntegrationStoreRepo
    const llm = yield* Llm
    const speech = yield* Speech
    const bindings = yield* Bindings
    const chat = yield* Intake
    const sessions = yield* Sessions
    const injector = yield* Injector
    const tasks = yield* Tasks
    const workspaces = yield* Workspaces
    const overviewRepo = yield* OverviewRepo
    const todoList = yield* Todos
    const ledger = yield* Inbound
    const serverAllowed = config.httpAllowedHosts.split(",")

    const usageOf = (caller: CallerIdentity): UsageContext => ({
      source: "integration",
      principalKind: "integration",
      principalId: caller.id
    })

    const complete = (caller: CallerIdentity, options: CompletionOptions): Effect.Effect<Completion, IntegrationCallFailed> => {
      const request: ChatRequest = {
        ...(options.model !== undefined ? { model: options.model } : {}),
        messages: options.messages.map((m) => ({ role: m.role, content: m.content })),
        ...(options.temperature !== undefined ? { temperature: options.temperature } : {}),
        ...(options.maxTokens !== undefined ? { max_tokens: options.maxTokens } : {}),
        ...(options.fallbackModels !== undefined ? { fallbackModels: options.fallbackModels } : {}),
        usage: usageOf(caller)
      }
      if (!options.json) {
        return llm.complete(request).pipe(
          Effect.mapBoth({
            onFailure: llmFailure,
            onSuccess: (result) => ({ content: result.content, model: result.model, usage: result.usage })
          })
        )
      }
      // JSON mode, tolerant reading and one more ask (providers/JsonCompletion.ts); no JSON even then
      // rejects, so a classifier can fail closed.
      return completeJson(llm.complete, request, AnyJson, { shape: options.jsonShape ?? "{...} (one JSON object, as asked above)" }).pipe(
        Effect.mapError(llmFailure),
        Effect.flatMap((answered) =>
          Option.match(answered.value, {
            onNone: () => new IntegrationCallFailed({ message: `The model's answer is not JSON: ${answered.text.slice(0, 200)}` }),
            onSome: (json) => Effect.succeed({ content: answered.text, model: answered.model, usage: answered.usage, json })
          })
        )
      )
    }

    /** Through the speech service, as `/transcribe` is: the hook first (source = the integration's id), the same checks. */
    const transcribe = (caller: CallerIdentity, options: TranscriptionOptions) =>
      Effect.gen(function*() {
        const format = formatOfUpload(options.mimeType ?? "", options.fileName ?? "audio.wav")
        if (!format) return yield* new IntegrationCallFailed({ message: `Unknown audio type: ${options.mimeType ?? options.fileName}` })
        const audio = prepareFile(options.audio, format, speech.limits)
        if (typeof audio === "string") return yield* new IntegrationCallFailed({ message: audio })
        const result = yield* speech
          .transcribe({ audio, source: caller.id, usage: usageOf(caller), model: options.model })
          .pipe(Effect.mapError(llmFailure))
        return { text: result.text }
      })

    const boundChannels = (caller: CallerIdentity, clientId: string | undefined): Effect.Effect<ReadonlyArray<BoundChannel>> =>
      Effect.gen(function*() {
        const type = caller.integrationType()
        const found = clientId !== undefined ? yield* bindings.findChannelsByClientId(clientId, type) : yield* bindings.channelsOfType(type)
        return found.map(({ channel, binding }) => ({
          channel: {
            id: channel.id,
            name: channel.name,
            bot_id: channel.bot_id,
            client_id: channel.client_id,
            require_mention: channel.require_mention,
            passive_memory: channel.passive_memory,
            workspace_enabled: channel.workspace_enabled
          },
          binding: {
            id: binding.id,
            integration_type: binding.integration_type,
            client_id: binding.client_id,
            wake_words: binding.wake_words,
            use_bot_wake_word: binding.use_bot_wake_word,
            hud_preset: binding.hud_preset
          }
        }))
      })

    const channelSession = (channelId: string) =>
      isUuid(channelId)
        ? chat.channelSession(channelId).pipe(
          Effect.catchTag("ChannelNotFound", () => new IntegrationCallFailed({ message: `Channel not found: ${channelId}` }))
        )
        : Effect.fail(new IntegrationCallFailed({ message: `Channel not found: ${channelId}` }))

    /** Only a channel bound to the caller: another channel's workspace is not its to write. */
    const requireBound = (caller: CallerIdentity, channelId: string) =>
      Effect.flatMap(
        isUuid(channelId) ? bindings.forChannel(channelId).pipe(Effect.orElseSucceed(() => [])) : Effect.succeed([]),
        (list) =>
          list.some((binding) => binding.integration_type === caller.integrationType())
            ? Effect.void
            : Effect.fail(new IntegrationCallFailed({ message: `Channel ${channelId} is not bound to ${caller.integrationType()}` }))
      )

    const storePassive = (caller: CallerIdentity, channelId: string, content: string, metadata: Record<string, unknown>) =>
      Effect.gen(function*() {
        const { session } = yield* channelSession(channelId)
        const source = `integration:${caller.id}`
        const message = yield* sessions.append(session.id, {
          role: "user",
          content,
          metadata: { ...metadata, passive: true, source, origin: injectionOrigin(source, metadata) }
        })
        return { message_id: message.id, session_id: session.id }
      })

    const writeFile = (caller: CallerIdentity, channelId: string, path: string, content: string) =>
      Effect.zipRight(
        requireBound(caller, channelId),
        workspaces.write(channelId, path, content).pipe(
          Effect.asVoid,
          Effect.mapError((error) => new IntegrationCallFailed({ message: failureMessage(error) }))
        )
      )

    /** The dispatcher a run's answer goes to when the caller names none. */
    const defaultDispatch = (caller: CallerIdentity) => {
      const types = caller.dispatchTypes()
      if (types.length === 1) return types[0]!
      return types.includes(caller.integrationType()) ? caller.integrationType() : "none"
    }

    const startRun = (caller: CallerIdentity, options: StartRunOptions, inboundId?: string) =>
      Effect.gen(function*() {
        const { session } = yield* channelSession(options.channelId)
        const dispatchType = options.channelDispatch ? undefined : options.dispatchType ?? defaultDispatch(caller)
        return yield* injector
          .inject(session.id, {
            content: options.content,
            source: `integration:${caller.id}`,
            runAgent: true,
            notify: dispatchType !== "none",
            executionConfig: options.executionConfig,
            dispatchType,
            dispatchConfig: options.dispatchConfig ?? {},
            extraMetadata: options.metadata,
            attachments: options.images?.map((image) => ({ type: "image", ...image })),
            inboundId
          })
          .pipe(
            Effect.map((injected) => ({ task_id: injected.task_id!, session_id: injected.session_id, message_id: injected.message_id })),
            Effect.catchTag("SessionNotFound", (error) => new IntegrationCallFailed({ message: error.detail }))
          )
      })

    const runResult = (taskId: string, timeoutMs: number | undefined): Effect.Effect<RunResult, IntegrationCallFailed> =>
      tasks.awaitFinished(taskId).pipe(
        Effect.timeoutFail({
          duration: Duration.millis(timeoutMs ?? config.runResultTimeoutMs),
          onTimeout: () =>
            new IntegrationCallFailed({ message: `Run ${taskId} did not finish within ${timeoutMs ?? config.runResultTimeoutMs} ms` })
        }),
        Effect.catchTag("TaskNotFound", (error) => new IntegrationCallFailed({ message: error.detail })),
        Effect.map((task) => ({
          task_id: task.id,
          session_id: task.session_id,
          status: task.status as RunResult["status"],
          result: task.result ?? null,
          error: task.error ?? null
        }))
      )

    /** The overview of mission control's dashboard: every channel, run, task, todo, heartbeat, integration. */
    const overview = (caller: CallerIdentity): Effect.Effect<Overview, unknown> =>
      Effect.gen(function*() {
        const [channels, activeRuns, counts, failed, todos, heartbeats, integrations] = yield* Effect.all(
          [
            overviewRepo.channels,
            overviewRepo.activeRuns,
            overviewRepo.taskCounts,
            overviewRepo.failedTasks,
            todoList.list({ status: "open", limit: 200 }),
            overviewRepo.heartbeats,
            caller.integrationStatuses()
          ],
          { concurrency: 1 }
        )
        return {
          channels,
          active_runs: activeRuns,
          tasks: { ...counts, failed },
          todos: todos.map((todo) => ({
            id: todo.id,
            title: todo.title,
            bot_id: todo.bot_id,
            channel_id: todo.channel_id,
            due_at: todo.due_at?.toISOString() ?? null
          })),
          heartbeats,
          integrations
        }
      })

    const todoItem = (todo: Effect.Effect.Success<ReturnType<typeof todoList.get>>): TodoItem => ({
      id: todo.id,
      title: todo.title,
      notes: todo.notes,
      status: todo.status,
      bot_id: todo.bot_id,
      channel_id: todo.channel_id,
      due_at: todo.due_at?.toISOString() ?? null,
      created_by: todo.created_by
    })
    const todoFailure = Effect.mapError((error: unknown) => new IntegrationCallFailed({ message: failureMessage(error) }))

    const todos = {
      list: (filter: Parameters<IntegrationTodos["list"]>[0]) =>
        filter?.channelId !== undefined && !isUuid(filter.channelId)
          ? Effect.fail(new IntegrationCallFailed({ message: `Not a channel id: ${filter.channelId}` }))
          : Effect.map(todoList.list({ ...filter, limit: Math.min(filter?.limit ?? 100, 500) }), (rows) => rows.map(todoItem)),
      add: (caller: CallerIdentity, todo: Parameters<IntegrationTodos["add"]>[0]) =>
        Effect.gen(function*() {
          const input = yield* Schema.decodeUnknown(CreateTodo)({
            title: todo.title,
            ...(todo.notes !== undefined ? { notes: todo.notes } : {}),
            ...(todo.botId !== undefined ? { bot_id: todo.botId } : {}),
            ...(todo.channelId !== undefined ? { channel_id: todo.channelId } : {}),
            ...(todo.dueAt !== undefined ? { due_at: todo.dueAt } : {})
          }).pipe(Effect.mapError((error) => new IntegrationCallFailed({ message: `Invalid todo: ${error.message}` })))
          return todoItem(yield* todoList.createBy(input, `integration:${caller.id}`).pipe(todoFailure))
        }),
      complete: (
        id: string
      ) => (isUuid(id)
        ? Effect.map(todoList.complete(id).pipe(todoFailure), todoItem)
        : Effect.fail(new IntegrationCallFailed({ message: `Todo not found: ${id}` })))
    }

    const cancelQueued = (caller: CallerIdentity, channelId: string | undefined) =>
      channelId !== undefined && !isUuid(channelId) ? Effect.succeed(0) : tasks.cancelPendingBySource(`integration:${caller.id}`, channelId)

    const request = (
      caller: CallerIdentity,
      url: string,
      options: HttpRequestOptions
    ): Effect.Effect<HttpResponse, IntegrationCallFailed> =>
      Effect.gen(function*() {
        const hosts = yield* caller.configuredHosts().pipe(Effect.orElseSucceed(() => []))
        const allowed: AllowList = allowList([...serverAllowed, ...hosts])
        const method = options.method ?? "GET"
        const retries = idempotent.has(method) ? Math.max(0, Math.min(options.retries ?? 2, 10)) : 0
        const body = options.json !== undefined ? JSON.stringify(options.json) : options.body
        const headers = {
          "user-agent": `cairn-integration/${caller.id}`,
          ...(options.json !== undefined ? { "content-type": "application/json" } : {}),
          ...options.headers
        }
        const once = Effect.tryPromise({
          try: (signal) =>
            guardedRequest(url, {
              method,
              headers,
              body,
              timeoutMs: options.timeoutMs ?? 10_000,
              allowed,
              label: { what: "Integration HTTP", setting: "INTEGRATION_HTTP_ALLOWED_HOSTS" },
              signal: options.signal ? AbortSignal.any([signal, options.signal]) : signal
            }),
          catch: (error) => error
        })
        for (let attempt = 0;; attempt++) {
          const outcome = yield* Effect.either(once)
          const retryable = outcome._tag === "Left"
            ? !(outcome.left instanceof OutboundRefused) && !options.signal?.aborted
            : outcome.right.status === 429 || outcome.right.status >= 500
          if (attempt < retries && retryable) {
            yield* Effect.sleep(httpRetryDelay(attempt))
            continue
          }
          if (outcome._tag === "Left") return yield* new IntegrationCallFailed({ message: failureMessage(outcome.left) })
          const response = outcome.right
          const text = response.body.toString("utf8")
          return {
            status: response.status,
            ok: response.status >= 200 && response.status < 300,
            headers: response.headers,
            text,
            bytes: new Uint8Array(response.body),
            json: <T>() => JSON.parse(text) as T
          }
        }
      })

    return {
      store,
      complete,
      transcribe,
      boundChannels,
      storePassive,
      writeFile,
      startRun,
      runResult,
      cancelQueued,
      request,
      overview,
      todos,
      inbound: inboundCapability(ledger, startRun, storePassive)
    } as const
  }),
  dependencies: [
    IntegrationStoreRepo.Default,
    Llm.Default,
    Speech.Default,
    Bindings.Default,
    Intake.Default,
    Sessions.Default,
    Injector.Default,
    Tasks.Default,
    Workspaces.Default,
    OverviewRepo.Default,
    Todos.Default,
    Inbound.Default
  ]
}) {}
