/** The bot editor's fields, in parts the create dialog and the edit page both use. */
import { ListField, Select, TextArea, TextField } from "../ui/Field.tsx"
import { Section } from "../ui/Page.tsx"
import { scrollRegion } from "../ui/scrollRegion.ts"
import type { BotDraft, ToolPolicy } from "./draft.ts"
import { modelOptions } from "./models.ts"
import type { BotOptions } from "./options.ts"
import { Picker } from "./Picker.tsx"

interface PartProps {
  readonly draft: BotDraft
  readonly change: (change: Partial<BotDraft>) => void
  readonly options: BotOptions
}

export const IdentityFields = ({ draft, change, creating }: Omit<PartProps, "options"> & { readonly creating: boolean }) => (
  <div className="grid-2">
    {creating ?
      (
        <TextField
          label="Id"
          required
          value={draft.id}
          onChange={(id) => change({ id })}
          description="Lowercase letters, digits, '-' and '_'; it cannot change later."
        />
      ) :
      null}
    <TextField label="Name" required value={draft.name} onChange={(name) => change({ name })} />
    <TextField label="Description" value={draft.description} onChange={(description) => change({ description })} />
  </div>
)

export const ModelField = ({ draft, change, options }: PartProps) => (
  <Select
    label="Model"
    value={draft.model}
    onChange={(model) => change({ model })}
    options={modelOptions(options.models, draft.model || null, "The server's default model")}
    description="From the providers' model lists: <provider>/<model>, the bare id on the default provider."
  />
)

export const FallbackModelsField = ({ draft, change, options }: PartProps) => (
  <ListField
    label="Fallback models"
    value={draft.fallback_models}
    onChange={(fallback_models) => change({ fallback_models })}
    description={`Tried in order when the model fails; separate with commas.${
      options.models.length ? ` Known: ${options.models.slice(0, 8).join(", ")}${options.models.length > 8 ? ", …" : ""}` : ""
    }`}
  />
)

const thinkingBudgets = [0, 1024, 4096, 8192, 16_000, 32_000]

/** Extended thinking for the models that take a budget (Claude, Gemini); a value set elsewhere stays offered. */
export const ThinkingField = ({ draft, change }: Omit<PartProps, "options">) => (
  <Select
    label="Thinking budget"
    value={String(draft.thinking_budget_tokens)}
    onChange={(value) => change({ thinking_budget_tokens: Number(value) })}
    options={[...new Set([...thinkingBudgets, draft.thinking_budget_tokens])].sort((a, b) => a - b).map((tokens) => ({
      value: String(tokens),
      label: tokens === 0 ? "Off" : `${tokens.toLocaleString("en")} tokens`
    }))}
    description="Extended thinking on Claude and Gemini models: shown as the bot's thinking, billed as output. Other models think as they do."
  />
)

export const PromptField = ({ draft, change }: Omit<PartProps, "options">) => (
  <TextArea
    label="System prompt"
    rows={8}
    monospace
    value={draft.system_prompt}
    onChange={(system_prompt) => change({ system_prompt })}
  />
)

export const ToolsPicker = ({ draft, change, options }: PartProps) =>
  options.tools ?
    <Picker legend="Tools" options={options.tools} picked={draft.tools} onChange={(tools) => change({ tools })} /> :
    <ListField label="Tools" value={draft.tools} onChange={(tools) => change({ tools })} />

export const ClientToolsPicker = ({ draft, change, options }: PartProps) => (
  <Picker
    legend="Client tools"
    options={options.clientTools}
    picked={draft.client_tools}
    onChange={(client_tools) => change({ client_tools })}
  />
)

const policyOptions: ReadonlyArray<{ value: ToolPolicy; label: string }> = [
  { value: "allow", label: "Allow" },
  { value: "require_approval", label: "Ask for approval" },
  { value: "deny", label: "Deny" }
]

/** One policy per tool the bot has: allow (the default), ask a human first, or never run it. */
export const ToolPolicies = ({ draft, change }: Omit<PartProps, "options">) => {
  const tools = [...new Set([...draft.tools, ...draft.client_tools])]
  if (tools.length === 0) return <p className="muted">Pick tools to set their approval policy.</p>
  return (
    <div {...scrollRegion}>
      <table className="data" aria-label="Tool approval policy">
        <thead>
          <tr>
            <th>Tool</th>
            <th>Policy</th>
          </tr>
        </thead>
        <tbody>
          {tools.map((tool) => (
            <tr key={tool}>
              <td className="mono">{tool}</td>
              <td>
                <select
                  aria-label={`Policy for ${tool}`}
                  value={draft.tool_policies[tool] ?? "allow"}
                  onChange={(event) => change({ tool_policies: { ...draft.tool_policies, [tool]: event.target.value as ToolPolicy } })}
                >
                  {policyOptions.map((option) => <option key={option.value} value={option.value}>{option.label}</option>)}
                </select>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  )
}

export const SkillsAndCarapaces = ({ draft, change, options }: PartProps) => (
  <div className="stack">
    {options.skills ?
      <Picker legend="Skills" options={options.skills} picked={draft.skills} onChange={(skills) => change({ skills })} /> :
      (
        <ListField
          label="Skills"
          value={draft.skills}
          onChange={(skills) => change({ skills })}
          description="Skill ids (`<stem>` or `integrations/<name>/<stem>`), separated by commas."
        />
      )}
    {options.carapaces ?
      <Picker legend="Carapaces" options={options.carapaces} picked={draft.carapaces} onChange={(carapaces) => change({ carapaces })} /> :
      <ListField label="Carapaces" value={draft.carapaces} onChange={(carapaces) => change({ carapaces })} />}
  </div>
)

/** The scoped key whose scopes the bot's widget tokens copy. */
export const ApiKeyField = ({ draft, change, options }: PartProps) =>
  options.keys ?
    (
      <Select
        label="API key"
        value={draft.api_key_id}
        onChange={(api_key_id) => change({ api_key_id })}
        options={[
          { value: "", label: "None" },
          ...(draft.api_key_id && !options.keys.some((key) => key.value === draft.api_key_id)
            ? [{ value: draft.api_key_id, label: draft.api_key_id }]
            : []),
          ...options.keys
        ]}
        description="Widget tokens for this bot carry this key's scopes."
      />
    ) :
    (
      <TextField
        label="API key id"
        value={draft.api_key_id}
        onChange={(api_key_id) => change({ api_key_id })}
        description="Widget tokens for this bot carry this key's scopes."
      />
    )

const untrustedOptions: ReadonlyArray<{ value: BotDraft["untrusted_policy"]; label: string }> = [
  { value: "approve", label: "Ask a person first" },
  { value: "deny", label: "Refuse the call" },
  { value: "allow", label: "Run it (the bot acts on outside content by design)" }
]

/** The provenance policy (docs/security.md): once outside content is in a turn, what a write or sending call does. */
export const OutsideContentFields = ({ draft, change }: Omit<PartProps, "options">) => (
  <div className="grid-2">
    <Select
      label="When outside content is in the conversation"
      value={draft.untrusted_policy}
      onChange={(value) => change({ untrusted_policy: value as BotDraft["untrusted_policy"] })}
      options={untrustedOptions}
      description="A mail, a stranger's chat message, a fetched page or a tool's result from elsewhere: calls that change files or send data out wait for a person, are refused, or run. Reading always runs."
    />
    <TextField
      label="Approval timeout (seconds)"
      type="number"
      value={draft.approval_timeout_seconds}
      onChange={(approval_timeout_seconds) => change({ approval_timeout_seconds })}
      placeholder="Server default"
      description="How long a call waits for a person before it is denied; 0 denies at once. Empty: the server's default."
    />
  </div>
)

/** The edit page's sections on what the bot may run: its tools, their approval policy, and outside content. */
export const ToolSections = (parts: PartProps) => (
  <>
    <Section title="Tools">
      <div className="stack">
        <ToolsPicker {...parts} />
        <ClientToolsPicker {...parts} />
        <h3>Approval policy</h3>
        <ToolPolicies {...parts} />
      </div>
    </Section>
    <Section title="Outside content">
      <OutsideContentFields {...parts} />
    </Section>
  </>
)
