/**
 * The tool registry: every tool a bot can be given, core or from an integration, with the spec's
 * schema (`{type: "function", function: {name, description, parameters}}`) and a function that
 * returns a string. Integration code registers plain (async) functions; they never see Effect.
 */
import { Context, Data, Duration, Effect, Layer } from "effect"
import type { ToolCallContext, ToolDefinition as ToolContract } from "../sdk/index.ts"

/** What a tool call knows about where it runs: the SDK's type, so integrations see the same. */
export type ToolContext = ToolCallContext

/**
 * A registered tool: the SDK's definition (schema, execute, per-call `timeoutMs`, the registry
 * default applying when unset), plus where it comes from: "core" or "integration:<name>".
 */
export interface ToolDefinition extends ToolContract {
  readonly source: string
}

export class ToolError extends Data.TaggedError("ToolError")<{ readonly message: string }> {}

export interface ToolRegistryShape {
  readonly register: (tool: ToolDefinition) => Effect.Effect<void>
  readonly unregister: (name: string) => Effect.Effect<void>
  readonly get: (name: string) => ToolDefinition | undefined
  readonly list: () => ReadonlyArray<ToolDefinition>
  /** Runs a tool with its timeout; a thrown error or a timeout becomes a ToolError with a message. */
  readonly execute: (name: string, args: Record<string, unknown>, context: ToolContext) => Effect.Effect<string, ToolError>
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
const toolsOfSource = (source: string, registered: ReadonlyArray<ToolDefinition>): Array<string> =>
  source.includes(":")
    ? registered
        .filter((tool) => tool.source === source)
        .map((tool) => tool.schema.function.name)
        .sort()
    : []

/**
 * A tools list with its groups expanded, in order, each name once: `@<group>` is one of
 * `toolGroups`, or `@<source>` for every registered tool of that source (`@mcp:github`). A group
 * that names nothing stays as it is (the planner reports it as unknown).
 */
export const expandToolNames = (names: ReadonlyArray<string>, registered: ReadonlyArray<ToolDefinition> = []): Array<string> => [
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
): P | "allow" => {
  const own = policies[name]
  if (own !== undefined) return own
  const ofSource = source?.includes(":") ? policies[`@${source}`] : undefined
  if (ofSource !== undefined) return ofSource
  for (const [group, members] of toolGroups) {
    const ofGroup = policies[`@${group}`]
    if (ofGroup !== undefined && members.includes(name)) return ofGroup
  }
  return "allow"
}


/** The actions the companion clients understand, which the `client_action` tool may ask for. */
export const clientActions = ["new_session", "switch_bot", "switch_session", "toggle_tts", "list_sessions", "list_bots", "show_history"] as const

const clientActionTool: ToolDefinition = {
  source: "core",
  schema: {
    type: "function",
    function: {
      name: "client_action",
      description:
        "Ask the user's client to do something in its interface: start a new session, switch bot or session, toggle speech, list sessions or bots, show the history. The client acts after this answer.",
      parameters: {
        type: "object",
        properties: {
          action: { type: "string", enum: [...clientActions] },
          bot_id: { type: "string", description: "For switch_bot: the bot to switch to" },
          session_id: { type: "string", description: "For switch_session: the session to switch to" }
        },
        required: ["action"]
      }
    }
  },
  // The result carries the action; the turn collects it into the response's client_actions.
  execute: (args) => {
    const action = args.action
    if (typeof action !== "string" || !(clientActions as ReadonlyArray<string>).includes(action)) {
      return `Error: action must be one of ${clientActions.join(", ")}`
    }
    if (action === "switch_bot" && typeof args.bot_id !== "string") return "Error: switch_bot needs bot_id"
    if (action === "switch_session" && typeof args.session_id !== "string") return "Error: switch_session needs session_id"
    const clientAction = {
      action,
      ...(action === "switch_bot" ? { bot_id: args.bot_id } : {}),
      ...(action === "switch_session" ? { session_id: args.session_id } : {})
    }
    return JSON.stringify({ status: "requested", client_action: clientAction })
  }
}

const coreTools: ReadonlyArray<ToolDefinition> = [
  clientActionTool,
  {
    source: "core",
    schema: {
      type: "function",
      function: {
        name: "current_time",
        description: "The current date and time (ISO 8601, UTC) and the server's time zone.",
        parameters: { type: "object", properties: {} }
      }
    },
    execute: () =>
      JSON.stringify({ now: new Date().toISOString(), time_zone: Intl.DateTimeFormat().resolvedOptions().timeZone })
  }
]

export const make = (options: { readonly timeoutMs?: number } = {}) =>
  Effect.sync((): ToolRegistryShape => {
    const tools = new Map<string, ToolDefinition>(coreTools.map((tool) => [tool.schema.function.name, tool]))
    return {
      register: (tool) => Effect.sync(() => void tools.set(tool.schema.function.name, tool)),
      unregister: (name) => Effect.sync(() => void tools.delete(name)),
      get: (name) => tools.get(name),
      list: () => [...tools.values()],
      execute: (name, args, context) => {
        const tool = tools.get(name)
        if (!tool) return Effect.fail(new ToolError({ message: `Unknown tool: ${name}` }))
        const timeout = tool.timeoutMs ?? options.timeoutMs ?? defaultToolTimeoutMs
        return Effect.tryPromise({
          // The signal aborts when the call is given up (its timeout, an interrupted turn), so a
          // tool can stop its own work (an MCP tool cancels its request).
          try: async (signal) => {
            const result: unknown = await tool.execute(args, { ...context, signal })
            // Integration code is plain JS: undefined (or a non-JSON value) must still be a string.
            if (typeof result === "string") return result
            return result === undefined ? "" : (JSON.stringify(result) ?? String(result))
          },
          catch: (cause) => new ToolError({ message: cause instanceof Error ? cause.message : String(cause) })
        }).pipe(
          Effect.timeoutFail({
            duration: Duration.millis(timeout),
            onTimeout: () => new ToolError({ message: `Tool ${name} timed out after ${timeout} ms` })
          })
        )
      }
    }
  })

export const layer = Layer.effect(ToolRegistry, make())
