/**
 * The OpenAI-compatible surface answers errors in OpenAI's shape,
 * `{"error": {"message", "type", "param", "code"}}`, and only there. Its own errors are declared
 * in that shape (so the OpenAPI document says so); every other error on a `/v1/` path (a missing
 * key, a scope, a validation, a rate limit, an unknown route) keeps its status and has its
 * `{detail}` body reshaped by `reshapeErrors`, the one place that knows the mapping.
 */
import { HttpApiSchema } from "@effect/platform"
import { Schema } from "effect"
import { issuePath } from "../contract/Errors.ts"
import { OpenAiError } from "./Model.ts"

const fields = {
  message: Schema.String,
  type: Schema.String,
  param: Schema.NullOr(Schema.String),
  code: Schema.NullOr(Schema.String)
}

/** A class whose wire form is OpenAI's error body at `status`. */
const openAiErrorClass = <Tag extends string>(tag: Tag, status: number, description: string) => {
  class Declared extends Schema.TaggedError<Declared>()(tag, fields) {}
  const wire = Schema.transform(OpenAiError, Schema.typeSchema(Declared), {
    strict: false,
    decode: (body) => new Declared(body.error),
    encode: (error) => ({ error: { message: error.message, type: error.type, param: error.param, code: error.code } })
  }).annotations(HttpApiSchema.annotations({ status, description }))
  return { Error: Declared, wire }
}

export const ModelNotFound = openAiErrorClass("ModelNotFound", 404, "No bot the key may use has that id")
export const SessionBusy = openAiErrorClass(
  "SessionBusy",
  409,
  "The bound session is running another turn, or the system is paused; nothing was stored (retry later)"
)
export const CompletionFailed = openAiErrorClass("CompletionFailed", 502, "The bot's turn failed (the model or a tool)")
export const CompletionCancelled = openAiErrorClass("CompletionCancelled", 409, "The turn was cancelled (POST /chat/cancel)")
export const CompletionInterrupted = openAiErrorClass("CompletionInterrupted", 503, "The server stopped the turn (it is shutting down)")

export const ResponseNotFound = openAiErrorClass("ResponseNotFound", 404, "No stored response the key may continue has that id")
export const UnsupportedParameter = openAiErrorClass(
  "UnsupportedParameter",
  400,
  "A request field Cairn cannot honour (n > 1 here, a JSON answer format)"
)

export const responseNotFound = (id: string, param: string) =>
  new ResponseNotFound.Error({
    message: `Previous response with id '${id}' not found.`,
    type: "invalid_request_error",
    param,
    code: "previous_response_not_found"
  })

export const unsupported = (param: string, message: string) =>
  new UnsupportedParameter.Error({ message, type: "invalid_request_error", param, code: "unsupported_parameter" })

export const modelNotFound = (model: string) =>
  new ModelNotFound.Error({
    message: `The model \`${model}\` does not exist or you do not have access to it.`,
    type: "invalid_request_error",
    param: "model",
    code: "model_not_found"
  })

/** The `type` and `code` an error of this status gets when it came as `{detail}`. */
const kindOf = (status: number): { readonly type: string; readonly code: string | null } => {
  if (status === 401) return { type: "invalid_request_error", code: "invalid_api_key" }
  if (status === 403) return { type: "invalid_request_error", code: "insufficient_permissions" }
  if (status === 404) return { type: "invalid_request_error", code: "not_found" }
  if (status === 429) return { type: "requests", code: "rate_limit_exceeded" }
  if (status >= 500) return { type: "server_error", code: null }
  return { type: "invalid_request_error", code: null }
}

interface Issue {
  readonly loc?: ReadonlyArray<string | number>
  readonly msg?: string
  readonly type?: string
}

/**
 * `{detail}` as OpenAI's error: a validation's first issue gives the message, its location the
 * `param` (`messages.0.content`, without the leading `body`) and its type the code; all issues are
 * kept in the message so none is lost.
 */
export const toOpenAiError = (status: number, detail: unknown): OpenAiError => {
  const kind = kindOf(status)
  if (Array.isArray(detail) && detail.length > 0) {
    const issues = detail as ReadonlyArray<Issue>
    const first = issues[0]!
    const param = issuePath(first.loc ?? [])
    const message = issues.map((issue) => `${issuePath(issue.loc ?? []) || "request"}: ${issue.msg ?? "invalid"}`).join("; ")
    return { error: { message, type: kind.type, param: param || null, code: first.type ?? kind.code } }
  }
  return { error: { message: typeof detail === "string" ? detail : "Request failed", type: kind.type, param: null, code: kind.code } }
}
