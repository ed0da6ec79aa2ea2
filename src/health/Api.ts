import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
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

export class HealthApi extends HttpApiGroup.make("health")
  .add(
    HttpApiEndpoint.get("health", "/health")
      .addSuccess(HealthStatus)
      .addError(UnhealthyResponse)
      .annotate(RequiredScope, PUBLIC)
      .annotate(OpenApi.Description, "Liveness: answers ok when the server and its database respond")
  )
  .annotate(OpenApi.Title, "Health")
{}
