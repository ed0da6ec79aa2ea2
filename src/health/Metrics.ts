/**
 * Prometheus text of the server's metrics (telemetry/Metrics.ts): Effect's metrics read through
 * OpenTelemetry's Prometheus exporter, the levels sampled just before. Served as `GET /metrics`
 * on the API (a key with `operations:read`) and, when METRICS_PORT is set, on a port of its own
 * with no credential, for a scraper on a private network (`metricsPortLive`).
 */
import * as OtelMetrics from "@effect/opentelemetry/Metrics"
import * as OtelResource from "@effect/opentelemetry/Resource"
import { PrometheusExporter, PrometheusSerializer } from "@opentelemetry/exporter-prometheus"
import { Effect, Layer, Metric, Option, Runtime } from "effect"
import * as http from "node:http"
import * as os from "node:os"
import { AppConfig } from "../config/AppConfig.ts"
import { cairnVersion } from "../contract/Version.ts"
import * as Metrics from "../telemetry/Metrics.ts"
import { MetricsRepo } from "./MetricsRepo.ts"

/** Prometheus's text exposition format. */
export const contentType = "text/plain; version=0.0.4; charset=utf-8"

export class MetricsExport extends Effect.Service<MetricsExport>()("cairn/MetricsExport", {
  scoped: Effect.gen(function*() {
    const repo = yield* MetricsRepo
    // A run's holder names its process first (`<host>:<pid>:<start>`, runs/Owners.ts).
    const processOwners = `${os.hostname()}:${process.pid}:%`
    // Read on demand only: no server of the exporter's own (METRICS_PORT has ours).
    const exporter = new PrometheusExporter({ preventServerStart: true })
    const producer = yield* OtelMetrics.makeProducer.pipe(
      Effect.provide(OtelResource.layer({ serviceName: "cairn", serviceVersion: cairnVersion }))
    )
    // The exporter's `MetricReader` is its own copy of the SDK's class (its pinned version), the same in shape.
    yield* OtelMetrics.registerProducer(producer, () => exporter as never)
    // No scope labels (one scope: this server), the resource as target_info.
    const serializer = new PrometheusSerializer(undefined, false, undefined, false, true)

    /** Runs and tasks; a database that does not answer leaves them as last read (readiness says why). */
    const sampleDatabase = repo.levels(processOwners).pipe(
      Effect.flatMap((levels) =>
        Effect.all([
          Metric.set(Metric.tagged(Metrics.runsRunning, "scope", "process"), levels.runs_here),
          Metric.set(Metric.tagged(Metrics.runsRunning, "scope", "cluster"), levels.runs_all),
          Metric.set(Metrics.runsQueued, levels.runs_queued),
          Metric.set(Metric.tagged(Metrics.tasksQueued, "status", "pending"), levels.tasks_pending),
          Metric.set(Metric.tagged(Metrics.tasksQueued, "status", "running"), levels.tasks_running),
          Metric.set(Metrics.taskAge, levels.oldest_pending_seconds ?? 0)
        ], { discard: true })
      ),
      Effect.timeout("2 seconds"),
      Effect.catchAllCause((cause) => Effect.logDebug("Metrics: the database levels were not read", cause))
    )

    const scrape = Effect.gen(function*() {
      yield* Metrics.sampleProcess
      yield* sampleDatabase
      const { resourceMetrics } = yield* Effect.promise(() => exporter.collect())
      return serializer.serialize(resourceMetrics)
    }).pipe(Effect.withTracerEnabled(false))

    return { scrape } as const
  }),
  dependencies: [MetricsRepo.Default]
}) {}

/**
 * METRICS_PORT: the same text on a port of its own (any path), without a credential, bound to
 * HOST like the API. Off (no listener) when not set.
 */
export const metricsPortLive = Layer.scopedDiscard(
  Effect.gen(function*() {
    const config = yield* AppConfig
    const port = config.metricsPort
    if (Option.isNone(port)) return
    const metrics = yield* MetricsExport
    const runtime = yield* Effect.runtime<never>()
    const server = http.createServer((request, response) => {
      if (request.method !== "GET" && request.method !== "HEAD") {
        response.writeHead(405, { allow: "GET, HEAD" }).end()
        return
      }
      Runtime.runPromiseExit(runtime)(metrics.scrape).then((exit) => {
        if (exit._tag === "Success") response.writeHead(200, { "content-type": contentType }).end(exit.value)
        else response.writeHead(500, { "content-type": "text/plain" }).end("metrics unavailable\n")
      })
    })
    yield* Effect.acquireRelease(
      Effect.async<void, Error>((resume) => {
        server.once("error", (error) => resume(Effect.fail(error)))
        server.listen(port.value, config.host, () => resume(Effect.void))
      }),
      () =>
        Effect.async<void>((resume) => {
          server.close(() => resume(Effect.void))
          server.closeAllConnections()
        })
    ).pipe(Effect.orDie)
    const address = server.address()
    yield* Effect.logInfo(`Metrics on port ${typeof address === "object" && address ? address.port : port.value}`)
  })
)
