/**
 * The pure parts of the policy: where content comes from (agent/Provenance.ts) and what the server
 * decides about a call from that and the tool's effect class (agent/Policy.ts).
 */
import { describe, expect, it } from "vitest"
import { decideCall } from "../../src/agent/Policy.ts"
import { type ExternalOrigin, externalOrigins, injectionOrigin, resultOrigin, storedOrigin } from "../../src/agent/Provenance.ts"

const web: ExternalOrigin = { kind: "external", source: "web", detail: "example.com" }

describe("provenance", () => {
  it("names an injected message's origin from its source, never trusting it more than its source allows", () => {
    expect(injectionOrigin("integration:msgbridge", { sender: "+15550100" })).toEqual({ kind: "external", source: "bridge" })
    expect(injectionOrigin("integration:msgbridge", { sender: "me", chat_guid: "c1" })).toEqual({ kind: "user" })
    expect(injectionOrigin("integration:mailbox")).toEqual({ kind: "external", source: "mail" })
    expect(injectionOrigin("integration:github")).toEqual({ kind: "external", source: "integration", detail: "github" })
    expect(injectionOrigin("webhook:ci")).toEqual({ kind: "external", source: "webhook", detail: "webhook:ci" })
    expect(injectionOrigin("api")).toEqual({ kind: "user" })
  })

  it("names a tool result's origin from the tool that brought it in", () => {
    const of = (name: string, args: Record<string, unknown> = {}, source: string | undefined = "core", result = "") =>
      resultOrigin({ name, source, args, result })
    expect(of("fetch_url", { url: "https://example.com/a?b" })).toEqual(web)
    expect(of("search_documents", { integration_id: "crm" })).toEqual({ kind: "external", source: "document", detail: "crm" })
    expect(of("env", {}, "mcp:inj")).toEqual({ kind: "external", source: "mcp", detail: "inj" })
    expect(of("lookup", {}, "integration:github")).toEqual({ kind: "external", source: "integration", detail: "github" })
    expect(of("read_file", { path: "data/INBOX/mail.md" })).toEqual({ kind: "external", source: "workspace", detail: "data/INBOX/mail.md" })
    expect(of("read_file", { path: "./data/x.md" })).toMatchObject({ kind: "external", source: "workspace" })
    expect(of("read_file", { path: "notes/todo.md" })).toEqual({ kind: "user" })
    expect(of("search_files", {}, "core", "notes/a.md:1: x\ndata/INBOX/m.md:3: y")).toMatchObject({ kind: "external", source: "workspace" })
    expect(of("list_files", {}, "core", "notes/a.md (3 bytes)")).toEqual({ kind: "user" })
    expect(of("current_time")).toEqual({ kind: "owner" })
    // A client tool's answer comes from the user's own client.
    expect(resultOrigin({ name: "shell_exec", source: undefined, args: {}, result: "" })).toEqual({ kind: "user" })
  })

  it("reads stored origins (jsonb or text) and counts each outside source once", () => {
    expect(storedOrigin(JSON.stringify(web))).toEqual(web)
    expect(storedOrigin({ kind: "external", source: "nowhere" })).toBeUndefined()
    expect(storedOrigin(null)).toBeUndefined()
    expect(externalOrigins([web, { kind: "user" }, undefined, { ...web }, { kind: "external", source: "mail" }])).toEqual([
      web,
      { kind: "external", source: "mail" }
    ])
  })
})

describe("the policy the server enforces", () => {
  const facts = { tool: "fetch_url", declared: undefined, untrustedPolicy: "approve" as const, effect: "egress" as const, origins: [web] }

  it("holds a write or egress call once outside content is in the context; read always runs", () => {
    expect(decideCall(facts)).toEqual({ _tag: "Ask", reason: "untrusted_content", origins: [web] })
    expect(decideCall({ ...facts, effect: "write" })).toMatchObject({ _tag: "Ask", reason: "untrusted_content" })
    expect(decideCall({ ...facts, effect: "read" })).toEqual({ _tag: "Run" })
    expect(decideCall({ ...facts, origins: [] })).toEqual({ _tag: "Run" })
  })

  it("refuses under deny, with the sources told to the model; runs under allow", () => {
    const refused = decideCall({ ...facts, untrustedPolicy: "deny" })
    expect(refused._tag).toBe("Refuse")
    expect(refused._tag === "Refuse" && refused.message).toContain("external: web (example.com)")
    expect(decideCall({ ...facts, untrustedPolicy: "allow" })).toEqual({ _tag: "Run" })
  })

  it("lets the bot's own tool_policies entry win", () => {
    expect(decideCall({ ...facts, declared: "allow" })).toEqual({ _tag: "Run" })
    expect(decideCall({ ...facts, declared: "deny", origins: [] })._tag).toBe("Refuse")
    expect(decideCall({ ...facts, declared: "require_approval", origins: [] })).toEqual({ _tag: "Ask", reason: "tool_policy", origins: [] })
  })
})
