/**
 * The dispatcher registry and result delivery. Built-ins are registered at construction;
 * integrations add theirs with `register(type, dispatcher)` (checked against the contract, see
 * Contract.ts). When a task finishes, `deliver(taskId)` takes the delivery (a lease in the
 * database, so one process delivers it), calls the dispatcher of its dispatch_type, and retries
 * failures with exponential backoff; the outcome is recorded on the task (delivery_status,
 * delivery_error, delivery_attempts) and never changes the task's own status. A send whose outcome
 * the dispatcher cannot know (`UncertainDelivery`) is recorded `uncertain` and not retried.
 */
import { Config, Duration, Effect, Schedule } from "effect"
import { ValidationError } from "../../contract/Errors.ts"
import { allowList, OutboundRefused } from "../../http/Outbound.ts"
import { faultPointFor, midSendFor } from "../../lifecycle/FaultInjection.ts"
import {
  type Dispatcher,
  type DispatcherContractError,
  type DispatchTask,
  isUncertainDelivery,
  type PostMessageOptions
} from "../../sdk/Dispatcher.ts"
import { traced } from "../../telemetry/Spans.ts"
import { Injector } from "../Injection.ts"
import { type TaskRow, TasksRepo } from "../Repo.ts"
import { Tasks } from "../Tasks.ts"
import { internalDispatcher, noneDispatcher, slackDispatcher, webhookDispatcher } from "./Builtins.ts"
import { checkDispatcher } from "./Contract.ts"

const dispatchSettings = Config.all({
  slackApiBaseUrl: Config.string("SLACK_API_BASE_URL").pipe(Config.withDefault("https://slack.com/api")),
  webhookAllowedHosts: Config.string("WEBHOOK_ALLOWED_HOSTS").pipe(Config.withDefault("")),
  webhookTimeoutMs: Config.integer("WEBHOOK_TIMEOUT_MS").pipe(Config.withDefault(10_000)),
  maxAttempts: Config.integer("DISPATCH_MAX_ATTEMPTS").pipe(Config.withDefault(5)),
  retryBaseMs: Config.integer("DISPATCH_RETRY_BASE_MS").pipe(Config.withDefault(1_000))
})

export const builtinTypes = ["chatplatform", "webhook", "internal", "none"] as const

/** An error after which the delivery is not tried again. */
const final = (error: unknown) => error instanceof OutboundRefused || isUncertainDelivery(error)

const errorText = (error: unknown) =>
  (error instanceof Error ? error.message : typeof error === "string" ? error : JSON.stringify(error)).slice(0, 1000)

/**
 * Delivery retries: backoff doubling from DISPATCH_RETRY_BASE_MS, DISPATCH_MAX_ATTEMPTS attempts in
 * all, none after a refused target (retrying it only delays the verdict) or an uncertain send
 * (repeating it could show it twice).
 */
const deliveryRetries = (settings: { readonly retryBaseMs: number; readonly maxAttempts: number }) =>
  Schedule.exponential(Duration.millis(settings.retryBaseMs)).pipe(
    Schedule.intersect(Schedule.recurs(settings.maxAttempts - 1)),
    Schedule.whileInput((error: unknown) => !final(error))
  )

export class Dispatchers extends Effect.Service<Dispatchers>()("cairn/Dispatchers", {
  effect: Effect.gen(function*() {
    const settings = yield* dispatchSettings
    const repo = yield* TasksRepo
    const tasks = yield* Tasks
    const injector = yield* Injector
    const runtime = yield* Effect.runtime<never>()
    const builtin = {
      slackApiBaseUrl: settings.slackApiBaseUrl,
      webhookAllowed: allowList(settings.webhookAllowedHosts.split(",")),
      webhookTimeoutMs: settings.webhookTimeoutMs
    }
    const registry = new Map<string, Dispatcher>([
      ["chatplatform", slackDispatcher(builtin)],
      ["webhook", webhookDispatcher(builtin)],
      ["internal", internalDispatcher(injector, runtime)],
      ["none", noneDispatcher]
    ])

    /**
     * Registers (or replaces) the dispatcher of a dispatch type. Fails with a
     * DispatcherContractError, and registers nothing, when the dispatcher breaks the contract.
     */
    const register = (type: string, dispatcher: unknown) =>
      Effect.try({
        try: () => void registry.set(type, checkDispatcher(type, dispatcher)),
        catch: (error) => error as DispatcherContractError
      })

    const types = () => [...registry.keys()]

    /** A request's dispatch_type, when it names one, must be registered: 422 otherwise. */
    const requireKnown = (type: string | undefined): Effect.Effect<void, ValidationError> =>
      type === undefined || registry.has(type)
        ? Effect.void
        : Effect.fail(
          ValidationError.single(["body", "dispatch_type"], `Unknown dispatch_type: ${type} (registered: ${types().join(", ")})`)
        )

    /** A message outside a task (delegation, heartbeat) through a dispatch type; false when it was not posted. */
    const postMessage = (type: string, dispatchConfig: Record<string, unknown>, text: string, options: PostMessageOptions = {}) =>
      Effect.gen(function*() {
        const dispatcher = registry.get(type)
        if (!dispatcher) return false
        const config = tasks.openDispatchConfig(dispatchConfig)
        return yield* Effect.tryPromise(async () => dispatcher.postMessage(config, text, { replyInThread: true, ...options })).pipe(
          Effect.catchAll((error) => Effect.as(Effect.logWarning(`postMessage through ${type} failed: ${errorText(error.cause)}`), false))
        )
      })

    const toDispatchTask = (row: TaskRow): DispatchTask => ({
      id: row.id,
      status: row.status as "complete" | "failed",
      bot_id: row.bot_id,
      session_id: row.session_id,
      channel_id: row.channel_id,
      source: row.source,
      prompt: row.prompt,
      result: row.result,
      error: row.error,
      dispatch_type: row.dispatch_type,
      dispatch_config: tasks.openDispatchConfig(row.dispatch_config)
    })

    const attempt = (row: TaskRow) =>
      Effect.suspend(() => {
        const dispatcher = registry.get(row.dispatch_type)
        if (!dispatcher) return Effect.fail(new Error(`No dispatcher is registered for dispatch_type "${row.dispatch_type}"`))
        return Effect.zipRight(
          midSendFor(row.prompt ?? ""),
          Effect.tryPromise({
            try: async () =>
              dispatcher.deliver(
                toDispatchTask(row),
                row.result ?? "",
                row.client_actions.length > 0 ? row.client_actions : null,
                { source: row.source }
              ),
            catch: (error) => (error instanceof Error ? error : new Error(errorText(error)))
          })
        ).pipe(Effect.tap(() => faultPointFor("after-send", row.prompt ?? "")))
      })

    /**
     * Delivers a finished task's result, retrying with backoff up to DISPATCH_MAX_ATTEMPTS. Does
     * nothing when another process holds the delivery or it is not pending.
     */
    const deliver = (taskId: string) =>
      Effect.gen(function*() {
        const leaseSeconds = Math.ceil((settings.webhookTimeoutMs + settings.retryBaseMs * 2 ** settings.maxAttempts) / 1000) + 5
        const row = yield* repo.claimDelivery(taskId, leaseSeconds)
        if (!row) return
        let n = 0
        // Each failed attempt is recorded before the next is scheduled (or the delivery given up).
        const recorded = Effect.suspend(() => {
          n += 1
          return attempt(row)
        }).pipe(
          Effect.tapError((error) => {
            const last = n >= settings.maxAttempts || final(error)
            const message = errorText(error)
            return Effect.all([
              // Told like the task's other changes: its inbound item (src/inbound) follows the outcome.
              Effect.zipRight(
                repo.recordDeliveryAttempt(taskId, isUncertainDelivery(error) ? "uncertain" : last ? "failed" : "pending", message),
                tasks.changed(taskId)
              ),
              Effect.logWarning(`Delivery of task ${taskId} through ${row.dispatch_type} failed (attempt ${n}): ${message}`),
              last ? Effect.void : repo.extendDelivery(taskId, leaseSeconds)
            ])
          })
        )
        // Stopped under way (the server stops): the lease is given back, so the next process's sweep
        // delivers it at once (a send that went out is found by its idempotency check, not repeated).
        const delivered = yield* Effect.either(Effect.retry(recorded, deliveryRetries(settings))).pipe(
          Effect.onInterrupt(() => repo.releaseDelivery(taskId))
        )
        if (delivered._tag === "Right") yield* Effect.zipRight(repo.recordDeliveryAttempt(taskId, "delivered", null), tasks.changed(taskId))
      }).pipe(Effect.catchAllCause((cause) => Effect.logError(`Delivery of task ${taskId} could not run`, cause)))

    /** Picks up deliveries a dead process left pending. */
    const deliverOrphans = Effect.flatMap(
      repo.orphanedDeliveries(20),
      (ids) => Effect.forEach(ids, deliver, { concurrency: 4, discard: true })
    )

    return traced("Dispatchers", { register, types, requireKnown, postMessage, deliver, deliverOrphans } as const)
  }),
  dependencies: [TasksRepo.Default, Injector.Default, Tasks.Default]
}) {}
