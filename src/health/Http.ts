import { HttpApiBuilder } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { Duration, Effect } from "effect"
import { CairnApi } from "../Api.ts"
import { HealthStatus, Unhealthy } from "./Api.ts"

export const HealthHttpLive = HttpApiBuilder.group(CairnApi, "health", (handlers) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const ok = new HealthStatus({ status: "ok" })
    return handlers.handle("health", () =>
      sql`SELECT 1`.pipe(
        Effect.timeoutFail({
          duration: Duration.seconds(3),
          onTimeout: () => new Unhealthy({ status: "error", detail: "Database did not answer within 3 s" })
        }),
        Effect.as(ok),
        Effect.catchTag("SqlError", (error) =>
          Effect.zipRight(
            Effect.logWarning("Health check: database unavailable", error),
            Effect.fail(new Unhealthy({ status: "error", detail: "Database unavailable" }))
          )
        ),
        Effect.withTracerEnabled(false)
      )
    )
  })
)
