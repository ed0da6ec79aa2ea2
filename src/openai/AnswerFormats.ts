/**
 * The answer format a caller of the OpenAI-compatible surface asks for, taken to the bot's model:
 * `json_object` and `json_schema` travel as the model call's `response_format` (an OpenAI-compatible
 * provider gets it as sent, Gemini its JSON response type and schema, Anthropic nothing: it has no
 * JSON mode); `text` is the default; anything else is refused rather than ignored.
 */
import { Effect } from "effect"
import { unsupported } from "./Errors.ts"

type Format = { readonly type: string } & { readonly [key: string]: unknown }

/** The Responses API's `text.format` (a schema's fields beside `type`) in chat completions' shape. */
export const chatFormatOf = (format: Format | null | undefined): Format | undefined => {
  if (!format || format.type !== "json_schema" || "json_schema" in format) return format ?? undefined
  const { type, ...schema } = format
  return { type, json_schema: schema }
}

/** The model calls' provider parameters for `format` (none for text), or a 400 naming `param`. */
export const answerFormatExtra = (format: Format | null | undefined, param: string) => {
  if (!format || format.type === "text") return Effect.succeed(undefined)
  if (format.type === "json_object" || format.type === "json_schema") return Effect.succeed({ response_format: format })
  return Effect.fail(unsupported(param, `${format.type} answers are not supported: ask for text, json_object or json_schema`))
}
