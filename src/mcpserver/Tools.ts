/**
 * How Cairn's MCP server declares and runs a tool: its JSON Schemas derived from its Schemas, its
 * arguments checked before it runs, and every failure of a call (bad arguments, a refusal, a
 * failed run, even a defect) answered as an `isError` result naming the reason, as the MCP
 * specification asks of tool failures; only an unknown tool is a protocol error.
 */
import type { CallToolResult, Tool } from "@modelcontextprotocol/sdk/types.js"
import { Effect, Either, Schema } from "effect"
import type { PrincipalShape } from "../auth/Principal.ts"
import type { Scope } from "../auth/Scopes.ts"
import { issuePath } from "../contract/Errors.ts"
import { argumentIssues, toolJsonSchema } from "../contract/ToolSchemas.ts"

/** Who calls, as the authentication middleware resolved them, and from where (for the chat rate limit). */
export interface Caller {
  readonly principal: PrincipalShape
  readonly address: string
}

/** What a failure of a Cairn service says, for a person or a model: its `detail`, issues as `field: message`. */
export const failureText = (error: { readonly _tag: string; readonly detail?: unknown }): string => {
  const { detail } = error
  if (typeof detail === "string") return detail
  if (Array.isArray(detail)) {
    return detail
      .map((issue: { loc?: ReadonlyArray<unknown>; msg?: string }) => {
        const where = issuePath(issue.loc ?? [])
        return where ? `${where}: ${issue.msg}` : String(issue.msg)
      })
      .join("; ")
  }
  return error._tag
}

export const refused = (text: string): CallToolResult => ({ isError: true, content: [{ type: "text", text }] })

export const answered = (text: string, structured: Record<string, unknown>, ...more: ReadonlyArray<string>): CallToolResult => ({
  content: [{ type: "text", text }, ...more.map((part) => ({ type: "text" as const, text: part }))],
  structuredContent: structured
})

export interface ToolSpec<A, I> {
  readonly name: string
  readonly title: string
  readonly description: string
  readonly scope: Scope
  readonly input: Schema.Schema<A, I>
  readonly output: Schema.Schema<any, any>
  readonly readOnly: boolean
  readonly run: (args: A, caller: Caller) => Effect.Effect<CallToolResult, { readonly _tag: string; readonly detail?: unknown }>
}

/** A tool with its argument type hidden: declared once, its JSON Schemas derived from its Schemas. */
export interface AnyTool {
  readonly name: string
  readonly scope: Scope
  readonly declaration: Tool
  /** Validates the arguments, then runs; every failure is an `isError` result naming its reason. */
  readonly call: (raw: unknown, caller: Caller) => Effect.Effect<CallToolResult>
}

export const tool = <A, I>(spec: ToolSpec<A, I>): AnyTool => {
  // Unknown argument names are refused: a misspelt `bot` would otherwise be silently ignored.
  const decode = Schema.decodeUnknownEither(spec.input, { errors: "all", onExcessProperty: "error" })
  return {
    name: spec.name,
    scope: spec.scope,
    declaration: {
      name: spec.name,
      title: spec.title,
      description: `${spec.description} (scope ${spec.scope})`,
      // The SDK's type names mutable arrays; the derived schema is the same JSON.
      inputSchema: toolJsonSchema(spec.input) as Tool["inputSchema"],
      outputSchema: toolJsonSchema(spec.output) as Tool["outputSchema"],
      annotations: { readOnlyHint: spec.readOnly, openWorldHint: false }
    },
    call: (raw, caller) => {
      const args = decode(raw ?? {})
      if (Either.isLeft(args)) {
        return Effect.succeed(refused(`Invalid arguments for ${spec.name}: ${argumentIssues(args.left)}`))
      }
      return spec.run(args.right, caller).pipe(
        Effect.catchAll((error) => Effect.succeed(refused(failureText(error)))),
        // A bug is still the tool's failure to the client (logged here with its cause), not a protocol error.
        Effect.catchAllDefect((defect) =>
          Effect.as(
            Effect.logError(`The MCP tool ${spec.name} failed`, defect),
            refused(`${spec.name} failed with an internal error; the server's log has the details`)
          )
        )
      )
    }
  }
}
