/**
 * The OpenAI-compatible surface under `/v1`: a bot is a model. Scope `chat`, like Cairn's own chat;
 * errors in OpenAI's shape (see Errors.ts).
 */
import { HttpApiEndpoint, HttpApiGroup, type HttpMethod, OpenApi } from "@effect/platform"
import { Authentication } from "../auth/Authentication.ts"
import { ChatRateLimited } from "../auth/ChatRateLimited.ts"
import { RequiredScope } from "../auth/RequiredScope.ts"
import { BotNotFound } from "../bots/Errors.ts"
import { BodyLimit } from "../contract/BodyLimit.ts"
import { detailBody } from "../contract/Errors.ts"
import { ProviderFailed } from "../providers/Errors.ts"
import { SessionNotFound } from "../sessions/Errors.ts"
import {
  CompletionCancelled,
  CompletionFailed,
  CompletionInterrupted,
  ModelNotFound,
  ResponseNotFound,
  SessionBusy,
  UnsupportedParameter
} from "./Errors.ts"
import { ChatCompletion, ChatCompletionRequest, ModelObject, ModelPath, ModelsList, SessionHeader } from "./Model.ts"
import { ResponseObject, ResponseRequest } from "./ResponsesModel.ts"

/**
 * What a bot's turn can end in on this surface, both endpoints alike: OpenAI-shaped failures, and
 * those of the chat path a bound call takes (its session's bot gone, its session not the caller's
 * to reach), reshaped like any `{detail}`.
 */
const turnErrors = <Name extends string, Method extends HttpMethod.HttpMethod, Path, UrlParams, Payload, Headers, Success, Error, R, RE>(
  endpoint: HttpApiEndpoint.HttpApiEndpoint<Name, Method, Path, UrlParams, Payload, Headers, Success, Error, R, RE>
) =>
  endpoint
    .addError(UnsupportedParameter.wire)
    .addError(SessionBusy.wire)
    .addError(CompletionFailed.wire)
    .addError(CompletionCancelled.wire)
    .addError(CompletionInterrupted.wire)
    .addError(detailBody(BotNotFound))
    .addError(detailBody(SessionNotFound))
    .addError(detailBody(ProviderFailed))

export class OpenAiApi extends HttpApiGroup.make("openai")
  .add(
    HttpApiEndpoint.get("models", "/v1/models")
      .addSuccess(ModelsList)
      .annotate(RequiredScope, "chat")
      .annotate(OpenApi.Description, "OpenAI-compatible: the bots this key may talk to, each as a model whose id is the bot's id")
  )
  .add(
    HttpApiEndpoint.get("model", "/v1/models/:model")
      .setPath(ModelPath)
      .addSuccess(ModelObject)
      .addError(ModelNotFound.wire)
      .annotate(RequiredScope, "chat")
      .annotate(OpenApi.Description, "OpenAI-compatible: one bot as a model (`<bot id>` or `cairn/<bot id>`)")
  )
  .add(
    HttpApiEndpoint.post("completions", "/v1/chat/completions")
      .setPayload(ChatCompletionRequest)
      // Its messages may carry images inline (data URLs).
      .annotate(BodyLimit, "files")
      .setHeaders(SessionHeader)
      .addSuccess(ChatCompletion)
      .addError(ModelNotFound.wire)
      .pipe(turnErrors)
      .annotate(RequiredScope, "chat")
      .annotate(ChatRateLimited, true)
      .annotate(
        OpenApi.Description,
        "OpenAI-compatible chat completion: runs the bot's turn (its tools run server-side) and answers OpenAI's chat.completion, " +
          "or its chunks as Server-Sent Events with `stream: true`. Bound to a Cairn session by the `X-Cairn-Session` header (a session id) " +
          "or the `user` field (one session per user and bot): then only the newest user message (or the tool results after the last " +
          "assistant message) is new. Without either, the messages are the whole conversation and nothing but usage is stored. " +
          "`tools` are the caller's own: a call to one ends the turn with `finish_reason: tool_calls`. Errors are OpenAI's error shape"
      )
  )
  .add(
    HttpApiEndpoint.post("responses", "/v1/responses")
      .setPayload(ResponseRequest)
      .annotate(BodyLimit, "files")
      .addSuccess(ResponseObject)
      .addError(ModelNotFound.wire)
      .addError(ResponseNotFound.wire)
      .pipe(turnErrors)
      .annotate(RequiredScope, "chat")
      .annotate(ChatRateLimited, true)
      .annotate(
        OpenApi.Description,
        "OpenAI-compatible Responses API: runs the bot's turn and answers OpenAI's response object, or its events as Server-Sent " +
          "Events with `stream: true`. A response is stored as a Cairn session (unless `store: false`): `previous_response_id` " +
          "continues it, reading only the new input. `tools` are the caller's function tools: a call to one ends the turn with a " +
          "`function_call` item, answered by a `function_call_output` item in the next request. Errors are OpenAI's error shape"
      )
  )
  .middleware(Authentication)
  .annotate(OpenApi.Title, "OpenAI-compatible")
{}
