/**
 * A bot as its form edits it, and back: the fields the console edits, with "none" as the empty
 * string for the pickers. Client tools are picked by name; a custom client tool (a whole schema
 * the bot carries) keeps its schema when saved back.
 */
import type { Bot, ClientTool, UntrustedPolicy } from "../../../bots/Model.ts"
import { builtInClientTools } from "../../../bots/Model.ts"

export type ToolPolicy = "allow" | "require_approval" | "deny"

export interface BotDraft {
  readonly id: string
  readonly name: string
  readonly description: string
  readonly model: string
  readonly system_prompt: string
  readonly tools: ReadonlyArray<string>
  readonly client_tools: ReadonlyArray<string>
  readonly skills: ReadonlyArray<string>
  readonly carapaces: ReadonlyArray<string>
  readonly fallback_models: ReadonlyArray<string>
  readonly tool_policies: Readonly<Record<string, ToolPolicy>>
  readonly api_key_id: string
  /** Extended thinking's budget; 0 is off. */
  readonly thinking_budget_tokens: number
  /** What a write or egress call does once outside content is in the turn (docs/security.md). */
  readonly untrusted_policy: UntrustedPolicy
  /** Seconds an approval waits; "" is the server's APPROVAL_TIMEOUT_SECONDS. */
  readonly approval_timeout_seconds: string
}

export const emptyDraft: BotDraft = {
  id: "",
  name: "",
  description: "",
  model: "",
  system_prompt: "",
  tools: [],
  client_tools: [],
  skills: [],
  carapaces: [],
  fallback_models: [],
  tool_policies: {},
  api_key_id: "",
  thinking_budget_tokens: 0,
  untrusted_policy: "approve",
  approval_timeout_seconds: ""
}

export const draftOf = (bot: Bot): BotDraft => ({
  id: bot.id,
  name: bot.name,
  description: bot.description,
  model: bot.model ?? "",
  system_prompt: bot.system_prompt,
  tools: bot.tools,
  client_tools: bot.client_tools.map((tool) => tool.name),
  skills: bot.skills,
  carapaces: bot.carapaces,
  fallback_models: bot.fallback_models,
  tool_policies: bot.tool_policies,
  api_key_id: bot.api_key_id ?? "",
  thinking_budget_tokens: bot.thinking_budget_tokens,
  untrusted_policy: bot.untrusted_policy,
  approval_timeout_seconds: bot.approval_timeout_seconds === null ? "" : String(bot.approval_timeout_seconds)
})

/** The client tools to store: the built-in ones by their schema, a custom one as the bot had it. */
const clientToolsOf = (names: ReadonlyArray<string>, had: ReadonlyArray<ClientTool>): Array<ClientTool> =>
  names.flatMap((name) => {
    const tool = had.find((existing) => existing.name === name) ?? builtInClientTools.get(name)
    return tool ? [tool] : []
  })

/** The fields an update or a create sends (policies only for tools the bot has, "allow" being the default). */
export const fieldsOf = (draft: BotDraft, had: ReadonlyArray<ClientTool> = []) => {
  const toolNames = new Set([...draft.tools, ...draft.client_tools])
  return {
    name: draft.name.trim(),
    description: draft.description,
    model: draft.model === "" ? null : draft.model,
    system_prompt: draft.system_prompt,
    tools: draft.tools,
    client_tools: clientToolsOf(draft.client_tools, had),
    skills: draft.skills,
    carapaces: draft.carapaces,
    fallback_models: draft.fallback_models,
    tool_policies: Object.fromEntries(
      Object.entries(draft.tool_policies).filter(([tool, policy]) => toolNames.has(tool) && policy !== "allow")
    ),
    api_key_id: draft.api_key_id === "" ? null : draft.api_key_id,
    thinking_budget_tokens: draft.thinking_budget_tokens,
    untrusted_policy: draft.untrusted_policy,
    // A number input gives "" for what is no number; the server's 422 then names the field.
    approval_timeout_seconds: draft.approval_timeout_seconds.trim() === "" ? null : Number(draft.approval_timeout_seconds)
  }
}
