/**
 * The tool registry: every tool a bot can be given (core, from an integration, an MCP server or a
 * workflow), each in the one contract of `Tool.ts`. It runs a call with the tool's timeout, in the
 * caller's fiber: a timeout or an interrupted turn interrupts the tool.
 */
import { Context, Duration, Effect, Layer, Schema } from "effect"
import { ChoiceArgument, declareTool, type Tool, type ToolContext, ToolError, ToolFailure } from "./Tool.ts"

export { type Tool, type ToolContext, ToolError } from "./Tool.ts"

export interface ToolRegistryShape {
  readonly register: (tool: Tool) => Effect.Effect<void>
  readonly unregister: (name: string) => Effect.Effect<void>
  readonly get: (name: string) => Tool | undefined
  readonly list: () => ReadonlyArray<Tool>
  /** Runs a tool with its timeout; a failure or a timeout is a ToolError with a message. */
  readonly execute: (name: string, args: unknown, context: ToolContext) => Effect.Effect<string, ToolError>
}

export class ToolRegistry extends Context.Tag("cairn/ToolRegistry")<ToolRegistry, ToolRegistryShape>() {}

export const defaultToolTimeoutMs = 30_000

/** Groups a bot or carapace can name with `@<group>` in its tools. */
export const toolGroups: ReadonlyMap<string, ReadonlyArray<string>> = new Map([
  ["files", ["list_files", "read_file", "write_file", "append_file", "search_files"]],
  ["documents", ["search_documents"]],
  ["memory", ["remember", "recall"]],
  ["todos", ["todos"]],
  ["web", ["fetch_url"]]
])

/**
 * The tools of a source with a prefix (`mcp:<server>`, `integration:<id>`), which a bot or
 * carapace names as the group `@<source>`; by name, so the order does not follow registration.
 */
const toolsOfSource = (source: string, registered: ReadonlyArray<Tool>): Array<string> =>
  source.includes(":")
    ? registered
      .filter((tool) => tool.source === source)
      .map((tool) => tool.name)
      .sort()
    : []

/**
 * A tools list with its groups expanded, in order, each name once: `@<group>` is one of
 * `toolGroups`, or `@<source>` for every registered tool of that source (`@mcp:github`). A group
 * that names nothing stays as it is (the planner reports it as unknown).
 */
export const expandToolNames = (names: ReadonlyArray<string>, registered: ReadonlyArray<Tool> = []): Array<string> => [
  ...new Set(
    names.flatMap((name) => {
      if (!name.startsWith("@")) return [name]
      const group = name.slice(1)
      const members = toolGroups.get(group) ?? toolsOfSource(group, registered)
      return members.length > 0 ? members : [name]
    })
  )
]

/**
 * A bot's policy for a tool: the tool's own entry, else the entry of its source's group
 * (`"@mcp:github": require_approval`), else the entry of a built-in group holding it, else allow.
 */
export const toolPolicy = <P extends string>(
  policies: Readonly<Record<string, P>>,
  name: string,
  source: string | undefined
): P | "allow" => declaredToolPolicy(policies, name, source) ?? "allow"

/** The entry of `tool_policies` that names a tool (itself, its source's group, a built-in group); undefined when none does. */
export const declaredToolPolicy = <P extends string>(
  policies: Readonly<Record<string, P>>,
  name: string,
  source: string | undefined
): P | undefined => {
  const own = policies[name]
  if (own !== undefined) return own
  const ofSource = source?.includes(":") ? policies[`@${source}`] : undefined
  if (ofSource !== undefined) return ofSource
  for (const [group, members] of toolGroups) {
    const ofGroup = policies[`@${group}`]
    if (ofGroup !== undefined && members.includes(name)) return ofGroup
  }
  return undefined
}

/** The actions the companion clients understand, which the `client_action` tool may ask for. */
export const clientActions = [
  "new_session",
  "switch_bot",
  "switch_session",
  "toggle_tts",
  "list_sessions",
  "list_bots",
  "show_history"
] as const

const ClientAction = Schema.Struct({
  action: ChoiceArgument(...clientActions),
  bot_id: Schema.optional(Schema.String),
  session_id: Schema.optional(Schema.String)
})

// The result carries the action; the turn collects it into the response's client_actions.
const clientActionTool = declareTool({
  name: "client_action",
  description:
    "Ask the user's client to do something in its interface: start a new session, switch bot or session, toggle speech, list sessions or bots, show the history. The client acts after this answer.",
  effect: "write",
  parameters: Schema.Struct({
    action: ClientAction.fields.action,
    bot_id: Schema.optional(Schema.String.annotations({ description: "For switch_bot: the bot to switch to" })),
    session_id: Schema.optional(Schema.String.annotations({ description: "For switch_session: the session to switch to" }))
  }),
  success: Schema.Struct({ status: Schema.Literal("requested"), client_action: ClientAction }),
  handler: ({ action, bot_id, session_id }) => {
    if (action === "switch_bot" && bot_id === undefined) return new ToolFailure({ message: "switch_bot needs bot_id" })
    if (action === "switch_session" && session_id === undefined) return new ToolFailure({ message: "switch_session needs session_id" })
    return Effect.succeed({
      status: "requested" as const,
      client_action: {
        action,
        ...(action === "switch_bot" ? { bot_id } : {}),
        ...(action === "switch_session" ? { session_id } : {})
      }
    })
  }
})

const currentTimeTool = declareTool({
  name: "current_time",
  description: "The current date and time (ISO 8601, UTC) and the server's time zone.",
  effect: "read",
  parameters: Schema.Struct({}),
  success: Schema.Struct({ now: Schema.String, time_zone: Schema.String }),
  handler: () => Effect.sync(() => ({ now: new Date().toISOString(), time_zone: Intl.DateTimeFormat().resolvedOptions().timeZone }))
})

export const make = (options: { readonly timeoutMs?: number } = {}) =>
  Effect.gen(function*() {
    const coreTools = [yield* clientActionTool, yield* currentTimeTool]
    const tools = new Map<string, Tool>(coreTools.map((tool) => [tool.name, tool]))
    const registry: ToolRegistryShape = {
      register: (tool) => Effect.sync(() => void tools.set(tool.name, tool)),
      unregister: (name) => Effect.sync(() => void tools.delete(name)),
      get: (name) => tools.get(name),
      list: () => [...tools.values()],
      execute: (name, args, context) => {
        const tool = tools.get(name)
        if (!tool) return Effect.fail(new ToolError({ tool: name, reason: "unknown", message: `Unknown tool: ${name}` }))
        const timeout = tool.timeoutMs ?? options.timeoutMs ?? defaultToolTimeoutMs
        // The tool runs in this fiber: the timeout, or the turn's interruption, interrupts it.
        return tool.run(args, context).pipe(
          Effect.timeoutFail({
            duration: Duration.millis(timeout),
            onTimeout: () => new ToolError({ tool: name, reason: "timeout", message: `Tool ${name} timed out after ${timeout} ms` })
          })
        )
      }
    }
    return registry
  })

export const layer = Layer.effect(ToolRegistry, make())
