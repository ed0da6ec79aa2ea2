/**
 * The server's metrics, as Effect metrics: they are read through OpenTelemetry (the
 * `@effect/opentelemetry` producer) and written as Prometheus text by its exporter
 * (health/Metrics.ts serves them). One instrumentation: a request, a provider call, a stream
 * counts here once, and each scrape samples what is a level rather than an event (pool, loop
 * delay, memory, queues) just before it is read.
 *
 * Names follow Prometheus's conventions (the exporter adds `_total` to counters); every label has
 * few values: a route is its pattern from the API (`/api/v1/sessions/:id`), never the URL.
 */
import { HttpApi, HttpServerRequest, type HttpServerResponse } from "@effect/platform"
import { Effect, Metric, MetricBoundaries, MetricLabel, Option } from "effect"
import { monitorEventLoopDelay } from "node:perf_hooks"

const tag = MetricLabel.make

const secondsBuckets = MetricBoundaries.fromIterable([0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120])

export const httpRequests = Metric.counter("cairn_http_requests", {
  description: "HTTP requests answered, by method, route pattern and status",
  incremental: true
})
export const httpErrors = Metric.counter("cairn_http_request_errors", {
  description: "HTTP requests answered with a 5xx, by method and route pattern",
  incremental: true
})
export const httpDuration = Metric.histogram(
  "cairn_http_request_duration_seconds",
  secondsBuckets,
  "Time to answer an HTTP request (to its headers, for a stream), by method and route pattern"
)
export const providerCalls = Metric.counter("cairn_provider_calls", {
  description: "LLM provider calls, by provider and outcome (ok, error)",
  incremental: true
})
export const providerDuration = Metric.histogram(
  "cairn_provider_call_duration_seconds",
  secondsBuckets,
  "LLM provider call time, by provider"
)
export const streamsOpen = Metric.gauge("cairn_streams_open", { description: "Server-sent event streams open on this process" })

// Levels sampled at each scrape (`sample` below, health/Metrics.ts).
export const runsRunning = Metric.gauge("cairn_runs_running", {
  description: "Runs running: on this process (scope=process) and on every process of the database (scope=cluster)"
})
export const runsQueued = Metric.gauge("cairn_runs_queued", {
  description: "Messages waiting for their session's run (queued tasks), cluster-wide"
})
export const tasksQueued = Metric.gauge("cairn_tasks", { description: "Tasks by status (pending, running), cluster-wide" })
export const taskAge = Metric.gauge("cairn_tasks_oldest_pending_age_seconds", { description: "Age of the oldest pending task" })
export const poolConnections = Metric.gauge("cairn_db_pool_connections", {
  description: "The PostgreSQL pool's connections by state (total, idle, waiting: requests waiting for one)"
})
export const poolMax = Metric.gauge("cairn_db_pool_max_connections", { description: "The PostgreSQL pool's size limit" })
export const loopDelay = Metric.gauge("cairn_event_loop_delay_seconds", {
  description: "Event-loop delay since the previous scrape, by quantile (0.5, 0.99, 1 = max)"
})
export const residentMemory = Metric.gauge("cairn_process_resident_memory_bytes", { description: "Resident set size (RSS)" })
export const heapUsed = Metric.gauge("cairn_process_heap_used_bytes", { description: "V8 heap in use" })

/** What a pool says of its connections (node-postgres's `Pool`), read at each scrape. */
export interface PoolStats {
  readonly totalCount: number
  readonly idleCount: number
  readonly waitingCount: number
  readonly options: { readonly max?: number }
}

const pools = new Set<PoolStats>()

/** Counts `pool` at each scrape until the returned release is called (its layer's end). */
export const watchPool = (pool: PoolStats) => {
  pools.add(pool)
  return () => pools.delete(pool)
}

const loop = monitorEventLoopDelay({ resolution: 10 })
let loopWatched = false

/** The levels that need no database: the pool, the event loop, memory. */
export const sampleProcess = Effect.suspend(() => {
  if (!loopWatched) {
    loopWatched = true
    loop.enable()
  }
  let total = 0, idle = 0, waiting = 0, max = 0
  for (const pool of pools) {
    total += pool.totalCount
    idle += pool.idleCount
    waiting += pool.waitingCount
    max += pool.options.max ?? 10
  }
  // The histogram's values are nanoseconds; an empty one (no sample yet) reads as zero.
  const quantile = (q: number) => (loop.count === 0 ? 0 : (q === 1 ? loop.max : loop.percentile(q * 100)) / 1e9)
  const delays = [0.5, 0.99, 1].map((q) => [q, quantile(q)] as const)
  loop.reset()
  const memory = process.memoryUsage()
  return Effect.all([
    Metric.set(Metric.tagged(poolConnections, "state", "total"), total),
    Metric.set(Metric.tagged(poolConnections, "state", "idle"), idle),
    Metric.set(Metric.tagged(poolConnections, "state", "waiting"), waiting),
    Metric.set(poolMax, max),
    ...delays.map(([q, seconds]) => Metric.set(Metric.tagged(loopDelay, "quantile", String(q)), seconds)),
    Metric.set(residentMemory, memory.rss),
    Metric.set(heapUsed, memory.heapUsed)
  ], { discard: true })
})

/** One provider call's end (usage/Usage.ts records every call, so it is counted there). */
export const providerCall = (provider: string, ok: boolean, durationMs: number) =>
  Effect.all([
    Metric.increment(Metric.taggedWithLabels(providerCalls, [tag("provider", provider), tag("outcome", ok ? "ok" : "error")])),
    Metric.update(Metric.tagged(providerDuration, "provider", provider), durationMs / 1000)
  ], { discard: true })

/** Opens a stream's count; the returned effect closes it. */
export const streamOpened = Effect.as(Metric.increment(streamsOpen), Metric.incrementBy(streamsOpen, -1))

// ---- routes -----------------------------------------------------------------------------------

interface Pattern {
  readonly method: string
  readonly path: string
  readonly segments: ReadonlyArray<string>
  /** Literal segments first: `/sessions/search` wins over `/sessions/:id`. */
  readonly rank: number
}

const matchers = new WeakMap<object, ReadonlyArray<Pattern>>()

const patternsOf = (api: HttpApi.HttpApi.Any): ReadonlyArray<Pattern> => {
  const known = matchers.get(api)
  if (known) return known
  const patterns: Array<Pattern> = []
  HttpApi.reflect(api as never, {
    onGroup: () => {},
    onEndpoint: ({ endpoint }) => {
      const segments = endpoint.path.split("/").filter((s) => s.length > 0)
      const rank = segments.reduce((sum, s, i) => sum + (s.startsWith(":") || s === "*" ? 0 : 2 ** (16 - i)), 0)
      patterns.push({ method: endpoint.method, path: endpoint.path, segments, rank })
    }
  })
  patterns.sort((a, b) => b.rank - a.rank)
  matchers.set(api, patterns)
  return patterns
}

const matches = (pattern: ReadonlyArray<string>, parts: ReadonlyArray<string>) => {
  for (let i = 0; i < pattern.length; i++) {
    const segment = pattern[i]!
    if (segment === "*") return true
    if (i >= parts.length) return segment.endsWith("?")
    if (!segment.startsWith(":") && segment !== parts[i]) return false
  }
  return pattern.length === parts.length
}

/** The API route a request went to, as its pattern; `other` for pages, documents and unknown paths. */
export const routeOf = (api: HttpApi.HttpApi.Any | undefined, method: string, url: string): string => {
  if (!api) return "other"
  const parts = url.split("?", 1)[0]!.split("/").filter((s) => s.length > 0)
  for (const pattern of patternsOf(api)) {
    if (pattern.method === method && matches(pattern.segments, parts)) return pattern.path
  }
  return "other"
}

/**
 * Counts and times every response (the outermost middleware, so a 404, a refusal or a 500 counts
 * as the client saw it). A request cut before an answer (a client gone) is not counted.
 */
export const measureRequests = <E, R>(
  app: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>
): Effect.Effect<HttpServerResponse.HttpServerResponse, E, R | HttpServerRequest.HttpServerRequest> =>
  Effect.flatMap(
    Effect.all([HttpServerRequest.HttpServerRequest, Effect.serviceOption(HttpApi.Api)]),
    ([request, api]) => {
      const started = performance.now()
      const route = routeOf(Option.getOrUndefined(api)?.api, request.method, request.url)
      return Effect.tap(app, (response) => {
        const labels = [tag("method", request.method), tag("route", route)]
        const status = response.status
        return Effect.all([
          Metric.increment(Metric.taggedWithLabels(httpRequests, [...labels, tag("status", String(status))])),
          status >= 500 ? Metric.increment(Metric.taggedWithLabels(httpErrors, labels)) : Effect.void,
          Metric.update(Metric.taggedWithLabels(httpDuration, labels), (performance.now() - started) / 1000)
        ], { discard: true })
      })
    }
  )
