/**
 * Built-in tools are written as effects over the server's services; the registry runs plain
 * functions (as integration tools are). `effectTool` bridges the two: a failure becomes the
 * thrown error the registry reports to the model as `Error: <message>`.
 */
import { Effect, Runtime } from "effect"
import type { ToolCallContext } from "../../sdk/index.ts"
import type { ToolDefinition } from "../Tools.ts"

/** What a failure says to the model: a domain error's detail, a validation's first message. */
export const failureText = (error: unknown): string => {
  const detail = (error as { detail?: unknown })?.detail
  if (typeof detail === "string") return detail
  if (Array.isArray(detail) && typeof detail[0]?.msg === "string") return detail[0].msg
  const message = (error as { message?: unknown })?.message
  return typeof message === "string" ? message : String(error)
}

export interface EffectTool {
  readonly name: string
  readonly description: string
  readonly parameters: ToolDefinition["schema"]["function"]["parameters"]
  readonly timeoutMs?: number
  readonly run: (args: Record<string, any>, context: ToolCallContext) => Effect.Effect<string, unknown>
}

export const effectTool = (runtime: Runtime.Runtime<never>, tool: EffectTool): ToolDefinition => ({
  source: "core",
  ...(tool.timeoutMs !== undefined ? { timeoutMs: tool.timeoutMs } : {}),
  schema: { type: "function", function: { name: tool.name, description: tool.description, parameters: tool.parameters } },
  execute: (args, context) =>
    Runtime.runPromise(runtime)(
      tool.run(args, context).pipe(Effect.catchAll((error) => Effect.fail(new Error(failureText(error)))))
    )
})

/** A string argument, or a failure naming it. */
export const text = (args: Record<string, unknown>, name: string, options: { readonly optional?: boolean } = {}): Effect.Effect<string, Error> => {
  const value = args[name]
  if (typeof value === "string") return Effect.succeed(value)
  if (options.optional && value === undefined) return Effect.succeed("")
  return Effect.fail(new Error(`${name} must be a string`))
}

/** An optional positive integer argument within [1, max], or `fallback`. */
export const count = (args: Record<string, unknown>, name: string, fallback: number, max: number): number => {
  const value = args[name]
  return typeof value === "number" && Number.isInteger(value) && value >= 1 ? Math.min(value, max) : fallback
}
