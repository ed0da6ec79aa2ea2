import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Authentication } from "../auth/Authentication.ts"
import { RequiredScope } from "../auth/RequiredScope.ts"
import { PUBLIC } from "../auth/Scopes.ts"

export class HealthStatus extends Schema.Class<HealthStatus>("HealthStatus")({
  status: Schema.Literal("ok"),
  /** The server's release, for clients and `cairn status`. */
  version: Schema.String
}) {}

/** 503 with `{"status":"error","detail":...}` when the database does not answer. */
export class Unhealthy extends Schema.TaggedError<Unhealthy>()(
  "Unhealthy",
  { status: Schema.Literal("error"), detail: Schema.String },
  HttpApiSchema.annotations({ status: 503 })
) {}

const UnhealthyResponse = Schema.transform(
  Schema.Struct({ status: Schema.Literal("error"), detail: Schema.String }),
  Schema.typeSchema(Unhealthy),
  { strict: true, decode: (body) => new Unhealthy(body), encode: ({ status, detail }) => ({ status, detail }) }
).annotations(HttpApiSchema.annotations({ status: 503, description: "The database does not answer" }))

/** One readiness check: whether it passed, and what it found. */
export class ReadinessCheck extends Schema.Class<ReadinessCheck>("ReadinessCheck")({
  ok: Schema.Boolean,
  detail: Schema.String
}) {}

/** Every check readiness makes, by name. */
export const ReadinessChecks = Schema.Struct({
  /** The database answers. */
  database: ReadinessCheck,
  /** It takes writes (not a standby, not read-only). */
  writable: ReadinessCheck,
  /** Every migration this release knows is applied. */
  migrations: ReadinessCheck,
  /** The server is not stopping. */
  draining: ReadinessCheck,
  /** Resident memory is under the soft limit, so new runs start. */
  memory: ReadinessCheck
})

export class Ready extends Schema.Class<Ready>("Ready")({
  status: Schema.Literal("ready"),
  checks: ReadinessChecks
}) {}

/** Why a server is not ready, first reason first: stopping, its database, or memory. */
export const NotReadyStatus = Schema.Literal("draining", "unavailable", "shedding")

/** 503 with `{"status": "draining"|"unavailable"|"shedding", "detail", "checks"}`. */
export class NotReady extends Schema.TaggedError<NotReady>()(
  "NotReady",
  { status: NotReadyStatus, detail: Schema.String, checks: ReadinessChecks },
  HttpApiSchema.annotations({ status: 503 })
) {}

const NotReadyResponse = Schema.transform(
  Schema.Struct({ status: NotReadyStatus, detail: Schema.String, checks: ReadinessChecks }),
  Schema.typeSchema(NotReady),
  {
    strict: true,
    decode: (body) => new NotReady(body),
    encode: ({ checks, detail, status }) => ({ status, detail, checks })
  }
).annotations(HttpApiSchema.annotations({ status: 503, description: "Not ready: draining, the database, or memory (see checks)" }))

export class HealthApi extends HttpApiGroup.make("health")
  .add(
    HttpApiEndpoint.get("health", "/health")
      .addSuccess(HealthStatus)
      .addError(UnhealthyResponse)
      .annotate(RequiredScope, PUBLIC)
      .annotate(OpenApi.Description, "Liveness: answers ok when the server and its database respond")
  )
  .add(
    HttpApiEndpoint.get("ready", "/health/ready")
      .addSuccess(Ready)
      .addError(NotReadyResponse)
      .annotate(RequiredScope, PUBLIC)
      .annotate(
        OpenApi.Description,
        "Readiness, for a load balancer: the database answers and takes writes, migrations are applied, the server is not draining (stopping) and not shedding (short of memory); 503 naming each check otherwise"
      )
  )
  .annotate(OpenApi.Title, "Health")
{}

/** Prometheus metrics, behind a credential (METRICS_PORT serves them without one, health/Metrics.ts). */
export class MetricsApi extends HttpApiGroup.make("metrics")
  .add(
    HttpApiEndpoint.get("metrics", "/metrics")
      .addSuccess(HttpApiSchema.Text({ contentType: "text/plain; version=0.0.4; charset=utf-8" }))
      .annotate(RequiredScope, "operations:read")
      .annotate(
        OpenApi.Description,
        "Prometheus metrics (text format): requests, errors and duration by route, runs running and queued, provider calls and latency, tasks, streams, the database pool, event-loop delay, memory. Also on METRICS_PORT without a credential when set"
      )
  )
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Metrics")
{}
