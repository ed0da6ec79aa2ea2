import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Authentication } from "../../auth/Authentication.ts"
import { RequiredScope } from "../../auth/RequiredScope.ts"
import { detailBody } from "../../contract/Errors.ts"
import { idPath } from "../../contract/Params.ts"
import { ApiKeyNotFound } from "./Errors.ts"
import { ApiKeyList, ApiKeyView, CreateApiKey, CreatedApiKey, UpdateApiKey } from "./Model.ts"

const KeyId = idPath("API key")

export class ApiKeysApi extends HttpApiGroup.make("apiKeys")
  .add(
    HttpApiEndpoint.post("create", "/api-keys")
      .setPayload(CreateApiKey)
      .addSuccess(CreatedApiKey, { status: 201 })
      .annotate(RequiredScope, "admin")
      .annotate(OpenApi.Description, "Create a scoped API key; the value (ask_...) is in this response only")
  )
  .add(
    HttpApiEndpoint.get("list", "/api-keys")
      .addSuccess(ApiKeyList)
      .annotate(RequiredScope, "admin")
      .annotate(OpenApi.Description, "List scoped API keys (never their values)")
  )
  .add(
    HttpApiEndpoint.get("get", "/api-keys/:id")
      .setPath(KeyId)
      .addSuccess(ApiKeyView)
      .annotate(RequiredScope, "admin")
      .annotate(OpenApi.Description, "Read one scoped API key (never its value)")
  )
  .add(
    HttpApiEndpoint.patch("update", "/api-keys/:id")
      .setPath(KeyId)
      .setPayload(UpdateApiKey)
      .addSuccess(ApiKeyView)
      .annotate(RequiredScope, "admin")
      .annotate(OpenApi.Description, "Rename a key or replace its scopes")
  )
  .add(
    HttpApiEndpoint.del("revoke", "/api-keys/:id")
      .setPath(KeyId)
      .addSuccess(ApiKeyView)
      .annotate(RequiredScope, "admin")
      .annotate(OpenApi.Description, "Revoke a key: it is refused from then on; the record stays for audit")
  )
  .addError(detailBody(ApiKeyNotFound))
  .middleware(Authentication)
  .prefix("/api/v1/admin")
  .annotate(OpenApi.Title, "API keys")
{}
