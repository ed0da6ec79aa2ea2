/**
 * What the server decides about a tool call before it runs, whatever the model says: the bot's
 * `tool_policies` entry for the tool when it has one; otherwise, once outside content is in the
 * context the call was made from (agent/Provenance.ts), a `write` or `egress` call follows the
 * bot's `untrusted_policy`. `read` calls always run: reading cannot carry anything out or change
 * what Cairn keeps.
 */
import type { ToolPolicy, UntrustedPolicy } from "../bots/Model.ts"
import type { ApprovalReason } from "./Events.ts"
import type { ExternalOrigin } from "./Provenance.ts"
import { describeOrigin } from "./Provenance.ts"
import type { EffectClass } from "./Tool.ts"

export type CallDecision =
  | { readonly _tag: "Run" }
  /** `message` is the tool result the model is told. */
  | { readonly _tag: "Refuse"; readonly message: string }
  | { readonly _tag: "Ask"; readonly reason: ApprovalReason; readonly origins: ReadonlyArray<ExternalOrigin> }

export interface CallFacts {
  readonly tool: string
  /** The bot's `tool_policies` entry naming the tool, if any (Tools.declaredToolPolicy). */
  readonly declared: typeof ToolPolicy.Type | undefined
  readonly untrustedPolicy: UntrustedPolicy
  /** The tool's effect class; a client tool, delegation or an undeclared tool is `egress`. */
  readonly effect: EffectClass
  /** The outside content in the context the call was made from. */
  readonly origins: ReadonlyArray<ExternalOrigin>
}

const run: CallDecision = { _tag: "Run" }

export const decideCall = (facts: CallFacts): CallDecision => {
  if (facts.declared === "deny") return { _tag: "Refuse", message: `Error: the tool ${facts.tool} is not allowed for this bot.` }
  if (facts.declared === "require_approval") return { _tag: "Ask", reason: "tool_policy", origins: facts.origins }
  if (facts.declared === "allow" || facts.effect === "read" || facts.origins.length === 0) return run
  switch (facts.untrustedPolicy) {
    case "allow":
      return run
    case "deny":
      return {
        _tag: "Refuse",
        message: `Error: the tool ${facts.tool} was not run: this conversation holds content from outside (${
          facts.origins.map(describeOrigin).join(", ")
        }), and this bot does not run tools that change or send anything after reading such content.`
      }
    case "approve":
      return { _tag: "Ask", reason: "untrusted_content", origins: facts.origins }
  }
}
