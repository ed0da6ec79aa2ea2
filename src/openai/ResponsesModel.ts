/**
 * The wire of `POST /v1/responses`: the subset of OpenAI's Responses API Cairn reads and writes.
 * Input is a string or input items (messages with text and image parts, the caller's function
 * calls and their outputs, references to items of a stored response). Fields a bot decides for
 * itself (temperature, max_output_tokens, tool_choice, reasoning, ...) are accepted and ignored, as
 * are unknown fields. Part of the contract: it imports only `effect`.
 */
import { Schema } from "effect"
import { body } from "../contract/Params.ts"
import { AnswerFormat } from "./Model.ts"

export const InputText = Schema.Struct({ type: Schema.Literal("input_text"), text: Schema.String })
export const OutputText = Schema.Struct({ type: Schema.Literal("output_text"), text: Schema.String })
export const InputImage = Schema.Struct({
  type: Schema.Literal("input_image"),
  image_url: Schema.optional(Schema.NullOr(Schema.String)),
  file_id: Schema.optional(Schema.NullOr(Schema.String)),
  detail: Schema.optional(Schema.NullOr(Schema.String))
})
export const ContentPart = Schema.Union(InputText, OutputText, InputImage)

export const MessageItem = Schema.Struct({
  type: Schema.optional(Schema.Literal("message")),
  role: Schema.Literal("user", "system", "developer", "assistant"),
  content: Schema.Union(Schema.String, Schema.Array(ContentPart)),
  id: Schema.optional(Schema.NullOr(Schema.String))
})
export const FunctionCallItem = Schema.Struct({
  type: Schema.Literal("function_call"),
  call_id: Schema.String.pipe(Schema.minLength(1)),
  name: Schema.String,
  arguments: Schema.String,
  id: Schema.optional(Schema.NullOr(Schema.String))
})
export const FunctionCallOutputItem = Schema.Struct({
  type: Schema.Literal("function_call_output"),
  call_id: Schema.String.pipe(Schema.minLength(1)),
  output: Schema.Union(Schema.String, Schema.Array(ContentPart))
})
/** An item of a stored response, by id: names the session it belongs to. */
export const ItemReference = Schema.Struct({ type: Schema.Literal("item_reference"), id: Schema.String })

export const InputItem = Schema.Union(MessageItem, FunctionCallItem, FunctionCallOutputItem, ItemReference)
export type InputItem = typeof InputItem.Type

/** A function tool the caller runs itself, in the Responses API's flat shape. */
export const ResponseTool = Schema.Struct({
  type: Schema.Literal("function"),
  name: Schema.String.pipe(
    Schema.pattern(/^[a-zA-Z0-9_-]{1,64}$/, { message: () => "A function name is 1-64 letters, digits, _ or -" })
  ),
  description: Schema.optional(Schema.NullOr(Schema.String)),
  parameters: Schema.optional(Schema.NullOr(Schema.Record({ key: Schema.String, value: Schema.Unknown }))),
  strict: Schema.optional(Schema.NullOr(Schema.Boolean))
})
export type ResponseTool = typeof ResponseTool.Type

export const ResponseRequest = body({
  /** A bot: its id, or `cairn/<id>`. */
  model: Schema.String.pipe(Schema.minLength(1)),
  input: Schema.Union(Schema.String, Schema.Array(InputItem).pipe(Schema.minItems(1))),
  instructions: Schema.optional(Schema.NullOr(Schema.String)),
  tools: Schema.optional(Schema.NullOr(Schema.Array(ResponseTool))),
  /** Continues the session of a stored response. */
  previous_response_id: Schema.optional(Schema.NullOr(Schema.String)),
  /** false: a stateless turn, nothing stored (without `previous_response_id`). Default true. */
  store: Schema.optional(Schema.NullOr(Schema.Boolean)),
  stream: Schema.optional(Schema.NullOr(Schema.Boolean)),
  text: Schema.optional(Schema.NullOr(Schema.Struct({ format: Schema.optional(Schema.NullOr(AnswerFormat)) })))
})
export type ResponseRequest = typeof ResponseRequest.Type

export const ResponseUsage = Schema.Struct({
  input_tokens: Schema.Int,
  input_tokens_details: Schema.Struct({ cached_tokens: Schema.Int }),
  output_tokens: Schema.Int,
  output_tokens_details: Schema.Struct({ reasoning_tokens: Schema.Int }),
  total_tokens: Schema.Int
})

const OutputMessage = Schema.Struct({
  type: Schema.Literal("message"),
  id: Schema.String,
  status: Schema.Literal("in_progress", "completed"),
  role: Schema.Literal("assistant"),
  content: Schema.Array(
    Schema.Struct({ type: Schema.Literal("output_text"), text: Schema.String, annotations: Schema.Array(Schema.Unknown) })
  )
})
const OutputFunctionCall = Schema.Struct({
  type: Schema.Literal("function_call"),
  id: Schema.String,
  status: Schema.Literal("in_progress", "completed"),
  call_id: Schema.String,
  name: Schema.String,
  arguments: Schema.String
})
export const OutputItem = Schema.Union(OutputMessage, OutputFunctionCall)
export type OutputItem = typeof OutputItem.Type

export const ResponseObject = Schema.Struct({
  id: Schema.String,
  object: Schema.Literal("response"),
  created_at: Schema.Int,
  status: Schema.Literal("in_progress", "completed", "failed"),
  error: Schema.NullOr(Schema.Struct({ code: Schema.String, message: Schema.String })),
  incomplete_details: Schema.Null,
  instructions: Schema.NullOr(Schema.String),
  model: Schema.String,
  output: Schema.Array(OutputItem),
  parallel_tool_calls: Schema.Boolean,
  previous_response_id: Schema.NullOr(Schema.String),
  store: Schema.Boolean,
  tools: Schema.Array(Schema.Unknown),
  usage: Schema.NullOr(ResponseUsage)
}).annotations({
  identifier: "OpenAiResponse",
  description: "OpenAI's response object. With `stream: true` the answer is instead Server-Sent Events of the Responses API's events"
})
export type ResponseObject = typeof ResponseObject.Type
