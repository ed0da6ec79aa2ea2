/**
 * Tool names with `:` and `/` (an MCP server's `mcp:<server>/<tool>`): how bots and carapaces name
 * them and their groups, how a bot's policy finds them, and how they travel to a provider that
 * takes only `[a-zA-Z0-9_-]{1,64}`.
 */
import { describe, expect, it } from "vitest"
import { foreignTool } from "../../src/agent/Tool.ts"
import { expandToolNames, toolPolicy } from "../../src/agent/Tools.ts"
import { toWireNames, wireToolName } from "../../src/providers/ToolNames.ts"

const tool = (name: string, source: string) =>
  foreignTool({ name, description: name, parameters: { type: "object", properties: {} }, source, execute: () => name })

const registered = [
  tool("current_time", "core"),
  tool("mcp:files/write", "mcp:files"),
  tool("mcp:files/read", "mcp:files"),
  tool("mcp:search/query", "mcp:search"),
  tool("mail_send", "integration:mailbox")
]

describe("tool names from MCP servers", () => {
  it("expands @mcp:<server> to that server's tools, by name, and keeps built-in groups", () => {
    expect(expandToolNames(["mcp:search/query", "@mcp:files", "@web", "mcp:files/read"], registered)).toEqual([
      "mcp:search/query",
      "mcp:files/read",
      "mcp:files/write",
      "fetch_url"
    ])
    expect(expandToolNames(["@integration:mailbox"], registered)).toEqual(["mail_send"])
    // A group that names nothing (a server not connected yet) stays, for the planner to report.
    expect(expandToolNames(["@mcp:absent", "@core"], registered)).toEqual(["@mcp:absent", "@core"])
  })

  it("finds a bot's policy by the tool's name, then its source's group, then a built-in group", () => {
    const policies = { "mcp:files/read": "allow", "@mcp:files": "require_approval", "@web": "deny" } as const
    expect(toolPolicy(policies, "mcp:files/read", "mcp:files")).toBe("allow")
    expect(toolPolicy(policies, "mcp:files/write", "mcp:files")).toBe("require_approval")
    expect(toolPolicy(policies, "fetch_url", "core")).toBe("deny")
    expect(toolPolicy(policies, "mcp:search/query", "mcp:search")).toBe("allow")
    expect(toolPolicy({}, "anything", undefined)).toBe("allow")
  })

  it("sends a name a provider refuses as a stable, safe stand-in and reads the call back", () => {
    expect(wireToolName("current_time")).toBe("current_time")
    const wire = wireToolName("mcp:files/read")
    expect(wire).toMatch(/^mcp_files_read_[0-9a-f]{8}$/)
    expect(wireToolName("mcp:files/read")).toBe(wire)
    expect(wireToolName("mcp:files_read")).not.toBe(wire)
    const long = wireToolName(`mcp:${"s".repeat(60)}/${"t".repeat(60)}`)
    expect(long).toMatch(/^[a-zA-Z0-9_-]{64}$/)

    const names = toWireNames(
      registered.map((t) => t.schema),
      [
        { role: "user", content: "read it" },
        {
          role: "assistant",
          content: null,
          tool_calls: [{ id: "c1", type: "function", function: { name: "mcp:files/read", arguments: "{}" } }]
        },
        { role: "tool", content: "text", tool_call_id: "c1" }
      ]
    )
    expect(names.tools!.map((t) => t.function.name).every((name) => /^[a-zA-Z0-9_-]{1,64}$/.test(name))).toBe(true)
    expect(names.tools![0]!.function.name).toBe("current_time")
    expect(names.messages[1]!.tool_calls![0]!.function.name).toBe(wire)
    expect(names.toolCallBack({ id: "c2", name: wire, arguments: "{}" })).toEqual({ id: "c2", name: "mcp:files/read", arguments: "{}" })
    expect(names.toolCallBack({ id: "c3", name: "current_time", arguments: "{}" }).name).toBe("current_time")
  })
})
