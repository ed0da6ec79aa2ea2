/**
 * The whole HTTP API as one definition: every domain's group, and the error responses any
 * endpoint may give. The OpenAPI document, the typed client and the endpoint catalogue all derive
 * from it.
 */
import { HttpApi, OpenApi } from "@effect/platform"
import { HealthApi } from "./health/Api.ts"
import { ErrorResponses } from "./http/Errors.ts"
import { SettingsApi } from "./settings/Api.ts"

export class CairnApi extends HttpApi.make("cairn")
  .add(HealthApi)
  .add(SettingsApi)
  .addError(ErrorResponses.validation)
  .addError(ErrorResponses.unauthorized)
  .addError(ErrorResponses.forbidden)
  .addError(ErrorResponses.notFound)
  .addError(ErrorResponses.tooManyRequests)
  .annotate(OpenApi.Title, "Cairn")
  .annotate(OpenApi.Version, "0.1.0")
  .annotate(
    OpenApi.Description,
    "Self-hosted agent server. Authenticate with `Authorization: Bearer <key>`; each operation names its scope in `x-required-scope`."
  ) {}
