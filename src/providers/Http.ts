import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { CairnApi } from "../Api.ts"
import { Principal, type PrincipalShape } from "../auth/Principal.ts"
import { TooManyRequests, ValidationError } from "../contract/Errors.ts"
import { ownerOf } from "../sessions/Access.ts"
import { ProviderFailed } from "./Errors.ts"
import { userOf } from "./Gate.ts"
import { Llm } from "./Llm.ts"
import { type CompletionRequest, CompletionResponse, type LlmError, ProviderList } from "./Model.ts"
import { Providers } from "./Providers.ts"

export const ProvidersHttpLive = HttpApiBuilder.group(CairnApi, "providers", (handlers) =>
  Effect.gen(function*() {
    const providers = yield* Providers
    return handlers
      .handle("list", () => providers.list.pipe(Effect.map((list) => new ProviderList({ providers: list }))))
      .handle("get", ({ path }) => providers.get(path.id))
      .handle("models", ({ path }) => providers.models(path.id))
      .handle("create", ({ payload }) => providers.create(payload))
      .handle("update", ({ path, payload }) => providers.update(path.id, payload))
      .handle("delete", ({ path }) => providers.remove(path.id))
  }))

/**
 * LlmError on the wire: rate_limited and budget_exceeded → 429 with Retry-After (a budget's at its
 * period's end, the detail naming the budget); upstream and timeout → 502;
 * invalid_request → 422 at `body`; unknown_model → 422 at `body.model` (the model is a request field).
 */
export const httpError = (error: LlmError) => {
  switch (error.kind) {
    case "rate_limited":
    case "budget_exceeded":
      return new TooManyRequests({ detail: error.detail, retryAfterSeconds: Math.max(1, Math.ceil(error.retryAfterSeconds ?? 1)) })
    case "invalid_request":
      return ValidationError.single(["body"], error.detail, "provider_rejected")
    case "unknown_model":
      return ValidationError.single(["body", "model"], error.detail, "unknown_model")
    default:
      return new ProviderFailed({ detail: error.detail })
  }
}

/** The proxy call for a decoded request. */
const proxyCompletion = (llm: Llm, payload: CompletionRequest, principal: PrincipalShape) =>
  llm
    .complete({
      ...(payload.model !== undefined ? { model: payload.model } : {}),
      messages: payload.messages,
      ...(payload.temperature !== undefined ? { temperature: payload.temperature } : {}),
      ...(payload.max_tokens !== undefined ? { max_tokens: payload.max_tokens } : {}),
      ...(payload.extra !== undefined ? { extra: payload.extra } : {}),
      ...(payload.fallback_models !== undefined ? { fallbackModels: payload.fallback_models } : {}),
      usage: {
        source: "proxy",
        principalKind: principal.kind,
        principalId: principal.id,
        caller: ownerOf(principal),
        ...(userOf(principal) !== undefined ? { user: userOf(principal)! } : {})
      }
    })
    .pipe(
      Effect.mapBoth({
        onFailure: httpError,
        // Checked once, when the response is encoded.
        onSuccess: (result) => new CompletionResponse({ content: result.content, model: result.model, usage: result.usage }, true)
      })
    )

export const LlmHttpLive = HttpApiBuilder.group(CairnApi, "llm", (handlers) =>
  Effect.gen(function*() {
    const llm = yield* Llm
    return handlers.handle(
      "completions",
      ({ payload }) => Effect.flatMap(Principal, (principal) => proxyCompletion(llm, payload, principal))
    )
  }))
