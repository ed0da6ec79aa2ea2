import { HttpApiBuilder } from "@effect/platform"
import type { SqlClient } from "@effect/sql"
import { Duration, Effect } from "effect"
import { CairnApi } from "../Api.ts"
import { cairnVersion } from "../contract/Version.ts"
import { ping } from "../db/Database.ts"
import { HealthStatus, Unhealthy } from "./Api.ts"
import { MetricsExport } from "./Metrics.ts"
import { Readiness } from "./Readiness.ts"

export const HealthHttpLive = HttpApiBuilder.group(CairnApi, "health", (handlers) =>
  Effect.gen(function*() {
    // The client is captured once, so the handler needs nothing per request.
    const databasePing = Effect.provide(ping, yield* Effect.context<SqlClient.SqlClient>())
    const ok = new HealthStatus({ status: "ok", version: cairnVersion })
    const readiness = yield* Readiness
    return handlers.handle("health", () =>
      databasePing.pipe(
        Effect.timeoutFail({
          duration: Duration.seconds(3),
          onTimeout: () => new Unhealthy({ status: "error", detail: "Database did not answer within 3 s" })
        }),
        Effect.as(ok),
        Effect.catchTag("SqlError", (error) =>
          Effect.zipRight(
            Effect.logWarning("Health check: database unavailable", error),
            Effect.fail(new Unhealthy({ status: "error", detail: "Database unavailable" }))
          )),
        Effect.withTracerEnabled(false)
      )).handle("ready", () => readiness.check)
  }))

export const MetricsHttpLive = HttpApiBuilder.group(CairnApi, "metrics", (handlers) =>
  Effect.gen(function*() {
    const metrics = yield* MetricsExport
    return handlers.handle("metrics", () => metrics.scrape)
  }))
