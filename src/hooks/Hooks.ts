/**
 * Lifecycle hooks: integrations register plain (sync or async) callbacks per event; the agent loop
 * fires events without waiting for them; HOOK_WEBHOOK_URLS receive every event as JSON.
 *
 * Off the caller's path, bounded:
 * - `fire` only snapshots the context and offers it to bounded dropping queues; it never waits.
 * - One dispatcher fiber takes events in order and calls the callbacks in registration order. A
 *   callback that returns a promise is not awaited there: a fiber forked into the layer's scope
 *   waits for it (at most `callbackTimeout`) only to log a rejection. So a slow async callback
 *   delays neither the run nor other callbacks; a sync callback that blocks the event loop is the
 *   one thing no design can absorb.
 * - Each webhook URL has its own queue and `webhookConcurrency` worker fibers, each POST abandoned
 *   after `webhookTimeout` (10 s by default, as the spec says). A slow or dead receiver therefore
 *   holds at most `webhookConcurrency` requests plus `webhookQueueCapacity` queued bodies, and
 *   delays no other URL; beyond that its new deliveries are dropped and counted.
 * Failures are logged (a warning at most once a minute per callback or URL, debug otherwise) and
 * never propagate. A webhook URL is a credential as a whole (a Slack incoming webhook's secret is
 * its path): logs show its scheme and host, and a failure's text is scrubbed of the rest.
 */
import { Clock, Duration, Effect, Layer, Option, Queue } from "effect"
import { AppConfig } from "../config/AppConfig.ts"
import {
  type BroadcastEvent,
  type HookCallback,
  type HookContext,
  type HookEvent,
  hookEvents,
  hookExtras,
  isHookEvent,
  type OverrideEvent,
  type Unregister
} from "../sdk/Hooks.ts"
import { traced } from "../telemetry/Spans.ts"
import { type HookWebhookPayload, isoWithOffset } from "./Model.ts"

export interface HookOptions {
  readonly webhookUrls: ReadonlyArray<string>
  /** How long one webhook POST may take before it is abandoned. */
  readonly webhookTimeout: Duration.DurationInput
  /** Webhook POSTs in flight at once, per URL. */
  readonly webhookConcurrency: number
  /** Webhook deliveries waiting for a worker, per URL; more are dropped. */
  readonly webhookQueueCapacity: number
  /** Fired events waiting for the dispatcher; more are dropped. */
  readonly callbackQueueCapacity: number
  /** How long an async broadcast callback is watched for a rejection to log. */
  readonly callbackTimeout: Duration.DurationInput
  /** How long one override callback may take before the chain moves on. */
  readonly overrideTimeout: Duration.DurationInput
}

export const defaultHookOptions: HookOptions = {
  webhookUrls: [],
  webhookTimeout: Duration.seconds(10),
  webhookConcurrency: 4,
  webhookQueueCapacity: 1_000,
  callbackQueueCapacity: 1_000,
  callbackTimeout: Duration.seconds(60),
  overrideTimeout: Duration.seconds(30)
}

/** Counters since startup, for logs, tests and operators. */
export interface HookStats {
  readonly callbacksFailed: number
  readonly eventsDropped: number
  readonly webhooksDelivered: number
  readonly webhooksFailed: number
  readonly webhooksDropped: number
}

interface Entry {
  readonly callback: (context: HookContext<any> & { readonly audio?: Uint8Array }) => unknown
  readonly name: string
}

interface Job {
  readonly event: HookEvent
  readonly context: HookContext
}

interface Delivery {
  readonly url: string
  readonly event: HookEvent
  readonly body: string
}

const isThenable = (value: unknown): value is PromiseLike<unknown> =>
  typeof value === "object" && value !== null && typeof (value as { then?: unknown }).then === "function"

/**
 * A webhook URL as it may appear in a log: its scheme and host (secrets live in paths and parameters
 * of any name), as secrets/SealedUrl.ts shows a stored one (hooks sit below secrets).
 */
export const loggableUrl = (raw: string): string => {
  try {
    const url = new URL(raw)
    return `${url.protocol}//${url.host}/****`
  } catch {
    return "<invalid url>"
  }
}

/** A failure's text with the URL (as written, or as `new URL` prints it, or past its host) shown as `loggableUrl`. */
const scrubbedFailure = (reason: string, raw: string): string => {
  const shown = loggableUrl(raw)
  let pieces = [raw]
  try {
    const url = new URL(raw)
    pieces = [raw, url.href, `${url.pathname}${url.search}`, url.search, url.password].filter((piece) => piece.length >= 3)
  } catch {
    // Not a URL: the text as written is all there is to take out.
  }
  return pieces.sort((a, b) => b.length - a.length).reduce((out, piece) => out.split(piece).join(shown), reason)
}

/**
 * A frozen copy taken when the event fires, so a callback sees the values of that moment and can
 * change them neither for the caller nor for the next callback.
 */
const snapshot = <E extends HookEvent>(context: HookContext<E>): HookContext<E> => {
  let copy: HookContext<E>
  try {
    copy = structuredClone(context)
  } catch {
    copy = { ...context, extra: { ...context.extra } }
  }
  Object.freeze(copy.extra)
  return Object.freeze(copy)
}

/** The webhook body: the ids and exactly the spec's extra keys for the event (missing ones null). */
export const webhookPayload = (event: HookEvent, context: HookContext, at: Date): HookWebhookPayload => {
  const extra = context.extra as Record<string, unknown>
  const data: Record<string, unknown> = {}
  for (const key of Object.keys(hookExtras[event].fields)) data[key] = extra[key] ?? null
  return {
    event,
    timestamp: isoWithOffset(at),
    context: {
      bot_id: context.bot_id,
      session_id: context.session_id,
      channel_id: context.channel_id,
      client_id: context.client_id,
      correlation_id: context.correlation_id
    },
    data
  }
}

const describeFailure = (cause: unknown): string => {
  if (cause instanceof Error) {
    const code = (cause.cause as { code?: unknown } | undefined)?.code
    return typeof code === "string" ? `${cause.message} (${code})` : cause.message
  }
  return String(cause)
}

/** Who listened to a fired event. */
export interface HookListening {
  readonly callbacks: number
  readonly webhooks: number
}

export type HookObserver = (event: HookEvent, context: HookContext, listening: HookListening) => Effect.Effect<void>

export const makeHooks = (options: HookOptions) =>
  Effect.gen(function*() {
    const scope = yield* Effect.scope
    const registry = new Map<HookEvent, ReadonlyArray<Entry>>()
    const stats = { callbacksFailed: 0, eventsDropped: 0, webhooksDelivered: 0, webhooksFailed: 0, webhooksDropped: 0 }
    const lastWarned = new Map<string, number>()

    /** A warning at most once a minute per key; debug in between so nothing floods the log. */
    const logThrottled = (key: string, message: string, annotations: Record<string, unknown>) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) => {
        const warn = now - (lastWarned.get(key) ?? Number.NEGATIVE_INFINITY) >= 60_000
        if (warn) lastWarned.set(key, now)
        return (warn ? Effect.logWarning(message) : Effect.logDebug(message)).pipe(Effect.annotateLogs(annotations))
      })

    const registerHook = <E extends HookEvent>(event: E, callback: HookCallback<NoInfer<E>>): Unregister => {
      // Integrations are plain code that may pass anything: refuse at registration, not at fire time.
      if (!isHookEvent(event)) {
        throw new TypeError(`Unknown hook event ${JSON.stringify(event)}; expected one of: ${hookEvents.join(", ")}`)
      }
      if (typeof callback !== "function") throw new TypeError(`The callback for ${event} must be a function`)
      const entry: Entry = { callback: callback as Entry["callback"], name: callback.name || "anonymous" }
      // Copy on write: a dispatch in progress keeps iterating the list it started with.
      registry.set(event, [...(registry.get(event) ?? []), entry])
      return () => {
        const entries = registry.get(event) ?? []
        registry.set(event, entries.filter((e) => e !== entry))
      }
    }

    const callbackFailed = (event: HookEvent, entry: Entry, error: unknown) => {
      stats.callbacksFailed++
      return logThrottled(`callback:${event}:${entry.name}`, `Hook callback failed: ${describeFailure(error)}`, {
        hook_event: event,
        hook_callback: entry.name
      })
    }

    /** Watches an async callback's promise only to log a rejection; bounded in time. */
    const watch = (job: Job, entry: Entry, promise: PromiseLike<unknown>) =>
      Effect.tryPromise({ try: () => Promise.resolve(promise), catch: (error) => error }).pipe(
        Effect.timeoutOption(options.callbackTimeout),
        Effect.matchEffect({
          onFailure: (error) => callbackFailed(job.event, entry, error),
          onSuccess: (settled) =>
            Option.isSome(settled)
              ? Effect.void
              : Effect.logDebug("Hook callback still running; no longer watched").pipe(
                Effect.annotateLogs({ hook_event: job.event, hook_callback: entry.name })
              )
        })
      )

    const invoke = (job: Job, entry: Entry): Effect.Effect<void> =>
      Effect.suspend(() => {
        let result: unknown
        try {
          result = entry.callback(job.context)
        } catch (error) {
          return callbackFailed(job.event, entry, error)
        }
        return isThenable(result) ? Effect.asVoid(Effect.forkIn(watch(job, entry, result), scope)) : Effect.void
      })

    const callbackQueue = yield* Queue.dropping<Job>(options.callbackQueueCapacity)
    yield* Queue.take(callbackQueue).pipe(
      Effect.flatMap((job) => Effect.forEach(registry.get(job.event) ?? [], (entry) => invoke(job, entry), { discard: true })),
      Effect.catchAllCause((cause) => Effect.logError("Hook dispatch failed", cause)),
      Effect.forever,
      Effect.forkScoped
    )

    /** One queue per URL, so a dead receiver cannot take the workers another URL needs. */
    const targets = yield* Effect.forEach(options.webhookUrls, (url) =>
      Effect.map(Queue.dropping<Delivery>(options.webhookQueueCapacity), (queue) => ({ url, queue })))

    const post = (delivery: Delivery) =>
      Effect.tryPromise({
        try: async (signal) => {
          const response = await fetch(delivery.url, {
            method: "POST",
            headers: { "content-type": "application/json", "user-agent": "cairn-hooks" },
            body: delivery.body,
            signal,
            redirect: "manual"
          })
          // The answer is not needed: release the connection without reading it.
          await response.body?.cancel().catch(() =>
            undefined
          )
          if (response.status < 200 || response.status >= 300) throw new Error(`HTTP ${response.status}`)
        },
        catch: describeFailure
      }).pipe(
        Effect.timeoutFail({
          duration: options.webhookTimeout,
          onTimeout: () => `no answer within ${Duration.format(Duration.decode(options.webhookTimeout))}`
        }),
        Effect.matchEffect({
          onSuccess: () => Effect.sync(() => void stats.webhooksDelivered++),
          onFailure: (reason) => {
            stats.webhooksFailed++
            const url = loggableUrl(delivery.url)
            // The throttle's key is the URL itself (in memory only): two webhooks on one host are two.
            return logThrottled(`webhook:${delivery.url}`, `Hook webhook delivery failed: ${scrubbedFailure(reason, delivery.url)}`, {
              hook_event: delivery.event,
              url
            })
          }
        })
      )

    for (const target of targets) {
      for (let i = 0; i < options.webhookConcurrency; i++) {
        yield* Queue.take(target.queue).pipe(
          Effect.flatMap(post),
          Effect.catchAllCause((cause) => Effect.logError("Hook webhook worker failed", cause)),
          Effect.forever,
          Effect.forkScoped
        )
      }
    }

    /** Counted always; a warning at most once a minute (a flood of drops must stay cheap to the caller). */
    const dropped = (counter: "eventsDropped" | "webhooksDropped", event: HookEvent, count = 1) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) => {
        stats[counter] += count
        const key = `dropped:${counter}`
        if (now - (lastWarned.get(key) ?? Number.NEGATIVE_INFINITY) < 60_000) return Effect.void
        lastWarned.set(key, now)
        return Effect.logWarning("Hook queue full; events dropped").pipe(
          Effect.annotateLogs({ hook_event: event, dropped_total: stats[counter] })
        )
      })

    /**
     * Queues the event for callbacks (a frozen snapshot) and webhooks (the JSON body, itself a
     * snapshot); never waits for either. A full webhook queue costs no serialisation.
     */
    const enqueue = (event: HookEvent, context: HookContext, callbacks: boolean) =>
      Effect.gen(function*() {
        if (callbacks && (registry.get(event)?.length ?? 0) > 0) {
          const accepted = yield* Queue.offer(callbackQueue, { event, context: snapshot(context) })
          if (!accepted) yield* dropped("eventsDropped", event)
        }
        let body: string | undefined
        for (const target of targets) {
          if ((yield* Queue.size(target.queue)) >= options.webhookQueueCapacity) {
            yield* dropped("webhooksDropped", event)
            continue
          }
          body ??= JSON.stringify(webhookPayload(event, context, new Date(yield* Clock.currentTimeMillis)))
          const accepted = yield* Queue.offer(target.queue, { url: target.url, event, body })
          if (!accepted) yield* dropped("webhooksDropped", event)
        }
      })

    /** Told of each event somebody listens to, in the firing fiber (the trace journal records it there). */
    const observers: Array<HookObserver> = []
    const observe = (observer: HookObserver) =>
      Effect.sync(() => {
        observers.push(observer)
      })

    /** Broadcasts a fire-and-forget event: returns at once, whatever the callbacks do. */
    const fire = <E extends BroadcastEvent>(event: E, context: HookContext<E>): Effect.Effect<void> =>
      Effect.suspend(() => {
        const callbacks = registry.get(event)?.length ?? 0
        // Nobody listening: nothing is copied or serialised.
        if (callbacks === 0 && options.webhookUrls.length === 0) return Effect.void
        const listening = { callbacks, webhooks: options.webhookUrls.length }
        return Effect.zipRight(
          Effect.forEach(observers, (observer) => observer(event, context, listening), { discard: true }),
          enqueue(event, context, true)
        )
      }).pipe(Effect.catchAllCause((cause) => Effect.logError("Hook fire failed", cause)))

    /**
     * Runs the override chain: callbacks in registration order, each awaited up to
     * `overrideTimeout`; the first string wins; null or undefined, a failure or a timeout falls
     * through. None: use the default. Webhooks receive the event as for any other.
     */
    const override = (event: OverrideEvent, context: HookContext<OverrideEvent>, audio: Uint8Array): Effect.Effect<Option.Option<string>> =>
      Effect.gen(function*() {
        // Each callback gets its own copy of the audio: one cannot change what the next one hears.
        const frozen = snapshot(context)
        yield* enqueue(event, context, false)
        for (const entry of registry.get(event) ?? []) {
          const outcome = yield* Effect.tryPromise({
            try: async () => entry.callback({ ...frozen, audio: audio.slice() }),
            catch: (error) => error
          }).pipe(Effect.timeout(options.overrideTimeout), Effect.either)
          if (outcome._tag === "Left") {
            yield* callbackFailed(event, entry, outcome.left)
            continue
          }
          const value = outcome.right
          if (typeof value === "string") return Option.some(value)
          if (value !== null && value !== undefined) {
            yield* callbackFailed(event, entry, new TypeError(`override returned ${typeof value}, not a string or null`))
          }
        }
        return Option.none<string>()
      })

    return traced(
      "Hooks",
      {
        registerHook,
        observe,
        fire,
        override,
        /** How many callbacks are registered for an event. */
        registered: (event: HookEvent): number => registry.get(event)?.length ?? 0,
        stats: Effect.sync((): HookStats => ({ ...stats }))
      } as const
    )
  })

export class Hooks extends Effect.Service<Hooks>()("cairn/Hooks", {
  scoped: Effect.flatMap(AppConfig, (config) => makeHooks({ ...defaultHookOptions, webhookUrls: config.hookWebhookUrls }))
}) {}

/** The service with options of its own (tests, embedding): anything not given is the default. */
export const layerWith = (options: Partial<HookOptions>): Layer.Layer<Hooks> =>
  Layer.scoped(Hooks, Effect.map(makeHooks({ ...defaultHookOptions, ...options }), Hooks.make))
