/**
 * The OpenAI-compatible surface's wire: the subset of OpenAI's Chat Completions and Models shapes
 * Cairn reads and writes. Fields OpenAI clients send that a bot decides for itself (temperature,
 * max_tokens, tool_choice, ...) are accepted and ignored, as OpenAI-compatible servers do; unknown
 * fields are ignored too. Part of the contract: it imports only `effect`.
 */
import { Schema } from "effect"
import { body } from "../contract/Params.ts"

export const TextPart = Schema.Struct({ type: Schema.Literal("text"), text: Schema.String })
export const ImagePart = Schema.Struct({
  type: Schema.Literal("image_url"),
  image_url: Schema.Struct({ url: Schema.String.pipe(Schema.minLength(1)), detail: Schema.optional(Schema.String) })
})

const TextContent = Schema.Union(Schema.String, Schema.Array(TextPart))

export const FunctionCall = Schema.Struct({
  id: Schema.String.pipe(Schema.minLength(1)),
  type: Schema.Literal("function"),
  function: Schema.Struct({ name: Schema.String, arguments: Schema.String })
})

export const SystemMessage = Schema.Struct({
  role: Schema.Literal("system", "developer"),
  content: TextContent,
  name: Schema.optional(Schema.String)
})
export const UserMessage = Schema.Struct({
  role: Schema.Literal("user"),
  content: Schema.Union(Schema.String, Schema.Array(Schema.Union(TextPart, ImagePart))),
  name: Schema.optional(Schema.String)
})
export const AssistantMessage = Schema.Struct({
  role: Schema.Literal("assistant"),
  content: Schema.optional(Schema.NullOr(TextContent)),
  tool_calls: Schema.optional(Schema.Array(FunctionCall)),
  name: Schema.optional(Schema.String)
})
export const ToolMessage = Schema.Struct({
  role: Schema.Literal("tool"),
  content: TextContent,
  tool_call_id: Schema.String.pipe(Schema.minLength(1))
})

export const CompletionMessage = Schema.Union(SystemMessage, UserMessage, AssistantMessage, ToolMessage)
export type CompletionMessage = typeof CompletionMessage.Type

/** A tool the caller runs itself: offered to the model; a call to it comes back in the answer. */
export type CallerTool = typeof CallerTool.Type
export const CallerTool = Schema.Struct({
  type: Schema.Literal("function"),
  function: Schema.Struct({
    name: Schema.String.pipe(
      Schema.pattern(/^[a-zA-Z0-9_-]{1,64}$/, { message: () => "A function name is 1-64 letters, digits, _ or -" })
    ),
    description: Schema.optional(Schema.String),
    parameters: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.Unknown }))
  })
})

/**
 * `response_format` (chat) or `text.format` (responses): the answer's format, kept whole (a JSON
 * schema's fields too); `text`, `json_object` and `json_schema` are honoured (`AnswerFormats.ts`).
 */
export const AnswerFormat = Schema.Struct({ type: Schema.String }, Schema.Record({ key: Schema.String, value: Schema.Unknown }))

export const ChatCompletionRequest = body({
  /** A bot: its id, or `cairn/<id>`. */
  model: Schema.String.pipe(Schema.minLength(1)),
  messages: Schema.Array(CompletionMessage).pipe(Schema.minItems(1)),
  stream: Schema.optional(Schema.NullOr(Schema.Boolean)),
  stream_options: Schema.optional(Schema.NullOr(Schema.Struct({ include_usage: Schema.optional(Schema.Boolean) }))),
  tools: Schema.optional(Schema.NullOr(Schema.Array(CallerTool))),
  /** How many choices: more than one runs that many stateless turns (a bound session takes one answer per message). */
  n: Schema.optional(Schema.NullOr(Schema.Int.pipe(Schema.between(1, 8)))),
  response_format: Schema.optional(Schema.NullOr(AnswerFormat)),
  /** Binds the call to a Cairn session, one per (user, bot); see also the X-Cairn-Session header. */
  user: Schema.optional(Schema.String.pipe(Schema.minLength(1), Schema.maxLength(256)))
})
export type ChatCompletionRequest = typeof ChatCompletionRequest.Type

/** The header that binds a call to a Cairn session by id (it wins over `user`). */
export const SessionHeader = Schema.Struct({ "x-cairn-session": Schema.optional(Schema.UUID) })

export const CompletionUsage = Schema.Struct({
  prompt_tokens: Schema.Int,
  completion_tokens: Schema.Int,
  total_tokens: Schema.Int
})

export const FinishReason = Schema.Literal("stop", "tool_calls")

export const ChatCompletion = Schema.Struct({
  id: Schema.String,
  object: Schema.Literal("chat.completion"),
  created: Schema.Int,
  model: Schema.String,
  choices: Schema.Array(
    Schema.Struct({
      index: Schema.Int,
      message: Schema.Struct({
        role: Schema.Literal("assistant"),
        content: Schema.NullOr(Schema.String),
        refusal: Schema.Null,
        tool_calls: Schema.optional(Schema.Array(FunctionCall))
      }),
      logprobs: Schema.Null,
      finish_reason: FinishReason
    })
  ),
  usage: CompletionUsage
}).annotations({
  identifier: "ChatCompletion",
  description:
    "OpenAI's chat.completion. With `stream: true` the answer is instead Server-Sent Events of chat.completion.chunk, ended by `data: [DONE]`"
})
export type ChatCompletion = typeof ChatCompletion.Type

export const ModelObject = Schema.Struct({
  id: Schema.String,
  object: Schema.Literal("model"),
  created: Schema.Int,
  owned_by: Schema.String
}).annotations({ identifier: "OpenAiModel" })

export const ModelsList = Schema.Struct({
  object: Schema.Literal("list"),
  data: Schema.Array(ModelObject)
}).annotations({ identifier: "OpenAiModelList" })

/** A model's path parameter: a bot id, or `cairn/<id>` with its slash encoded (`cairn%2F<id>`, as the OpenAI SDKs send it). */
export const ModelPath = Schema.Struct({ model: Schema.String })

/** OpenAI's error body, which this surface answers instead of `{detail}`. */
export const OpenAiError = Schema.Struct({
  error: Schema.Struct({
    message: Schema.String,
    type: Schema.String,
    param: Schema.NullOr(Schema.String),
    code: Schema.NullOr(Schema.String)
  })
})
export type OpenAiError = typeof OpenAiError.Type
