import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Authentication } from "../auth/Authentication.ts"
import { RequiredScope } from "../auth/RequiredScope.ts"
import { detailBody } from "../contract/Errors.ts"
import { pathParams } from "../contract/Params.ts"
import { ProviderConflict, ProviderFailed, ProviderNotFound } from "./Errors.ts"
import {
  CompletionRequest,
  CompletionResponse,
  CreateProvider,
  ModelList,
  ProviderId,
  ProviderList,
  ProviderView,
  UpdateProvider
} from "./Model.ts"

const idPath = pathParams({ id: ProviderId })

export class ProvidersApi extends HttpApiGroup.make("providers")
  .add(
    HttpApiEndpoint.get("list", "/api/v1/admin/providers")
      .addSuccess(ProviderList)
      .annotate(RequiredScope, "providers:read")
      .annotate(OpenApi.Description, "List LLM providers (API keys masked); `default` comes from OPENAI_BASE_URL / OPENAI_API_KEY")
  )
  .add(
    HttpApiEndpoint.get("get", "/api/v1/admin/providers/:id")
      .setPath(idPath)
      .addSuccess(ProviderView)
      .annotate(RequiredScope, "providers:read")
      .annotate(OpenApi.Description, "Get one provider (API key masked)")
  )
  .add(
    HttpApiEndpoint.get("models", "/api/v1/admin/providers/:id/models")
      .setPath(idPath)
      .addSuccess(ModelList)
      .annotate(RequiredScope, "providers:read")
      .annotate(OpenApi.Description, "The provider's models with their prices: those configured here and those its /models lists")
  )
  .add(
    HttpApiEndpoint.post("create", "/api/v1/admin/providers")
      .setPayload(CreateProvider)
      .addSuccess(ProviderView, { status: 201 })
      .addError(detailBody(ProviderConflict))
      .annotate(RequiredScope, "providers:write")
      .annotate(OpenApi.Description, "Add an OpenAI-compatible provider; its API key is stored encrypted")
  )
  .add(
    HttpApiEndpoint.put("update", "/api/v1/admin/providers/:id")
      .setPath(idPath)
      .setPayload(UpdateProvider)
      .addSuccess(ProviderView)
      .addError(detailBody(ProviderConflict))
      .annotate(RequiredScope, "providers:write")
      .annotate(
        OpenApi.Description,
        "Replace a provider's settings. `api_key` omitted or sent back masked keeps the stored key; null removes it. " +
          "A base_url on another origin (scheme, host, port) must send the key and credential headers again (422 otherwise)"
      )
  )
  .add(
    HttpApiEndpoint.del("delete", "/api/v1/admin/providers/:id")
      .setPath(idPath)
      .addSuccess(HttpApiSchema.NoContent)
      .addError(detailBody(ProviderConflict))
      .annotate(RequiredScope, "providers:write")
      .annotate(OpenApi.Description, "Delete a provider (not the default one)")
  )
  .addError(detailBody(ProviderNotFound))
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Providers")
{}

export class LlmApi extends HttpApiGroup.make("llm")
  .add(
    HttpApiEndpoint.post("completions", "/api/v1/llm/completions")
      .setPayload(CompletionRequest)
      .addSuccess(CompletionResponse)
      .addError(detailBody(ProviderFailed))
      .annotate(RequiredScope, "llm:completions")
      .annotate(
        OpenApi.Description,
        "One chat completion through the provider system. 429 (with Retry-After) when the provider is still rate-limiting after retries; 502 when it fails; 422 for an invalid request or an unknown model"
      )
  )
  .middleware(Authentication)
  .annotate(OpenApi.Title, "LLM")
{}
