/**
 * The one tool contract. A tool is declared once: its parameters and its result as Schemas (the
 * JSON Schema the model is offered is derived from the parameters, and the model's arguments are
 * decoded by the same Schema), what it does to the world (its effect class), a timeout, and a
 * handler that is an Effect. The registry runs the handler in the turn's own fiber, so a timeout
 * or a cancelled run interrupts it: a request it made is aborted, a write it had not begun is never
 * begun.
 *
 * Tools that come from outside (an integration's Promise function, an MCP server's tool, a
 * workflow's trigger) have a JSON Schema and no Schema: `foreignTool` converts them, once, into
 * the same shape, with the abort signal as their interruption.
 */
import { Data, Effect, Schema } from "effect"
import { argumentIssues, EffectClass, type ObjectJsonSchema, toolJsonSchema } from "../contract/ToolSchemas.ts"
import type { ToolCallContext, ToolEffectClass, ToolSchema } from "../sdk/index.ts"

export { EffectClass }

// The SDK imports nothing of src/, so it spells the classes out; the compiler holds the two equal.
const sdkNamesTheSameClasses: [ToolEffectClass, EffectClass] extends [EffectClass, ToolEffectClass] ? true : never = true
void sdkNamesTheSameClasses

/** What a call knows about where it runs: the SDK's type, so integrations see the same. */
export type ToolContext = ToolCallContext

/** Why a call gave no result; `message` is what the model is told (after `Error: `). */
export class ToolError extends Data.TaggedError("ToolError")<{
  readonly tool: string
  readonly reason: "unknown" | "arguments" | "failed" | "timeout"
  readonly message: string
}> {}

/** A tool's own refusal of a call it understood ("No todo …"): the model is told the message. */
export class ToolFailure extends Data.TaggedError("ToolFailure")<{ readonly message: string }> {}

/** What a tool's handler may fail with: its own refusal, or a domain error (its `detail` is told). */
export type HandlerError = { readonly message: string } | { readonly detail: unknown }

/** A tool as the registry holds it, whatever declared it. */
export interface Tool {
  readonly name: string
  /** The spec's shape, as the model is offered it. */
  readonly schema: ToolSchema
  readonly effect: EffectClass
  /** "core", "integration:<id>", "mcp:<server>" or "workflow:<id>". */
  readonly source: string
  /** Its own limit; the registry's default applies when unset. */
  readonly timeoutMs: number | undefined
  /** Decodes the arguments and runs: the result text, or why there is none. Interruptible. */
  readonly run: (args: unknown, context: ToolContext) => Effect.Effect<string, ToolError>
}

/** What a failure says to the model: a domain error's detail, a validation's first message. */
export const failureText = (error: unknown): string => {
  const detail = (error as { detail?: unknown })?.detail
  if (typeof detail === "string") return detail
  if (Array.isArray(detail) && typeof detail[0]?.msg === "string") return detail[0].msg
  const message = (error as { message?: unknown })?.message
  return typeof message === "string" ? message : String(error)
}

/** A result as the model reads it: text as it is, anything else as JSON. */
const asText = (value: unknown): string => {
  if (typeof value === "string") return value
  return value === undefined ? "" : (JSON.stringify(value) ?? String(value))
}

const schemaOf = (name: string, description: string, parameters: ObjectJsonSchema): ToolSchema => ({
  type: "function",
  function: { name, description, parameters }
})

export interface ToolSpec<A, I, S, SI, E extends HandlerError, R> {
  readonly name: string
  readonly description: string
  readonly effect: EffectClass
  readonly timeoutMs?: number
  readonly parameters: Schema.Schema<A, I, never>
  readonly success: Schema.Schema<S, SI, never>
  readonly handler: (args: A, context: ToolContext) => Effect.Effect<S, E, R>
}

/**
 * Declares a tool from Schemas and an Effect handler; the services the handler needs are taken
 * now, so a call needs none.
 */
export const declareTool = <A, I, S, SI, E extends HandlerError, R>(
  spec: ToolSpec<A, I, S, SI, E, R>,
  source = "core"
): Effect.Effect<Tool, never, R> =>
  Effect.map(Effect.context<R>(), (services): Tool => {
    const decode = Schema.decodeUnknown(spec.parameters, { errors: "all" })
    const encode = Schema.encode(spec.success)
    const failed = (error: unknown) => new ToolError({ tool: spec.name, reason: "failed", message: failureText(error) })
    return {
      name: spec.name,
      schema: schemaOf(spec.name, spec.description, toolJsonSchema(spec.parameters)),
      effect: spec.effect,
      source,
      timeoutMs: spec.timeoutMs,
      run: (args, context) =>
        decode(args ?? {}).pipe(
          Effect.mapError(
            (error) =>
              new ToolError({
                tool: spec.name,
                reason: "arguments",
                message: `Invalid arguments for ${spec.name}: ${argumentIssues(error)}`
              })
          ),
          Effect.flatMap((decoded) => Effect.mapError(spec.handler(decoded, context), failed)),
          Effect.flatMap((result) => Effect.mapError(encode(result), failed)),
          Effect.map(asText),
          Effect.provide(services)
        )
    }
  })

/** A tool known by its JSON Schema only: a workflow's (its params), or a foreign one's. */
export interface JsonSchemaToolSpec<E extends HandlerError> {
  readonly name: string
  readonly description: string
  readonly parameters: ObjectJsonSchema
  /** Undeclared is `egress`. */
  readonly effect?: EffectClass | undefined
  readonly source: string
  readonly timeoutMs?: number | undefined
  /** Its answer: text, or any value, sent as JSON. Its own code checks the arguments beyond "an object". */
  readonly handler: (args: Record<string, unknown>, context: ToolContext) => Effect.Effect<unknown, E>
}

const ArgumentObject = Schema.Record({ key: Schema.String, value: Schema.Unknown })
const decodeArgumentObject = Schema.decodeUnknown(ArgumentObject)

export const jsonSchemaTool = <E extends HandlerError>(spec: JsonSchemaToolSpec<E>): Tool => ({
  name: spec.name,
  schema: schemaOf(spec.name, spec.description, spec.parameters),
  effect: spec.effect ?? "egress",
  source: spec.source,
  timeoutMs: spec.timeoutMs,
  run: (args, context) =>
    decodeArgumentObject(args ?? {}).pipe(
      Effect.mapError(() =>
        new ToolError({ tool: spec.name, reason: "arguments", message: `Invalid arguments for ${spec.name}: an object is expected` })
      ),
      Effect.flatMap((object) =>
        Effect.mapError(spec.handler(object, context), (error) =>
          new ToolError({ tool: spec.name, reason: "failed", message: failureText(error) }))
      ),
      Effect.map(asText)
    )
})

/** A tool run as a Promise (an integration's, an MCP server's): converted once, here. */
export interface ForeignToolSpec extends Omit<JsonSchemaToolSpec<never>, "handler"> {
  /** Its answer, or a promise of it; the signal aborts when the call is given up (its timeout, a cancelled run). */
  readonly execute: (args: Record<string, unknown>, context: ToolContext) => unknown
}

/** A thrown error or a rejected promise is the tool's failure; the call's interruption aborts its signal. */
export const foreignTool = ({ execute, ...spec }: ForeignToolSpec): Tool =>
  jsonSchemaTool({
    ...spec,
    handler: (args, context) =>
      Effect.tryPromise({
        try: async (signal) => await execute(args, { ...context, signal }),
        catch: (cause) => new ToolFailure({ message: failureText(cause) })
      })
  })

// ---------------------------------------------------------------------------------------------
// Arguments as models send them

/**
 * A whole number a model may send as a number or as numeric text, kept within [min, max] (an
 * out-of-range count is clamped, not refused: "limit: 500" still answers). Offered as an integer.
 */
export const CountArgument = (options: { readonly min: number; readonly max: number; readonly description?: string }) =>
  Schema.transform(Schema.Union(Schema.Number, Schema.NumberFromString), Schema.Number, {
    strict: true,
    decode: (value) => Math.min(options.max, Math.max(options.min, Math.trunc(value))),
    encode: (value) => value
  }).annotations({
    jsonSchema: {
      type: "integer",
      minimum: options.min,
      ...(Number.isFinite(options.max) ? { maximum: options.max } : {}),
      ...(options.description ? { description: options.description } : {})
    }
  })

/** A yes/no a model may send as a boolean or as "true"/"false". Offered as a boolean. */
export const FlagArgument = (description: string) =>
  Schema.Union(
    Schema.Boolean,
    Schema.transform(Schema.Literal("true", "false"), Schema.Boolean, {
      strict: true,
      decode: (text) => text === "true",
      encode: (flag) => (flag ? "true" : "false")
    })
  ).annotations({ jsonSchema: { type: "boolean", description } })

/** One of a few words; a wrong one is told in one line with the choices (not one line per choice). */
export const ChoiceArgument = <const Choices extends ReadonlyArray<string>>(...choices: Choices) =>
  Schema.Literal(...choices).annotations({ message: () => ({ message: `must be one of ${choices.join(", ")}`, override: true }) })

/** Text that says something: not empty, nor only white space. */
export const NonBlankArgument = (description?: string) =>
  Schema.String.pipe(Schema.pattern(/\S/, { message: () => "must not be empty" })).annotations(description ? { description } : {})
