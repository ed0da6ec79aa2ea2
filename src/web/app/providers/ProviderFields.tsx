/**
 * The provider dialog's connection fields: the preset chosen (with a way back to the picker), the id,
 * the API type (a select for a custom provider or an edit; a preset's is shown), the base URL, and the
 * API key, said to be needed or not as the preset has it.
 */
import type { ProviderType } from "../../../providers/Model.ts"
import type { ProviderPreset } from "../../../providers/Presets.ts"
import { Select, TextField } from "../ui/Field.tsx"
import { HintText, keyNote, providerTypes, typeLabels } from "./PresetPicker.tsx"

const baseUrlHelp: Readonly<Record<ProviderType, { readonly placeholder: string; readonly description: string }>> = {
  openai: { placeholder: "https://api.example.com/v1", description: "An OpenAI-compatible API, usually ending in /v1." },
  anthropic: { placeholder: "https://api.anthropic.com", description: "The Messages API's root (without /v1)." },
  gemini: { placeholder: "https://generativelanguage.googleapis.com", description: "The Gemini API's root." }
}

/** What was chosen, and the button back to the picker. */
const Chosen = ({ preset, type, onBack }: {
  readonly preset: ProviderPreset | undefined
  readonly type: ProviderType
  readonly onBack: () => void
}) => (
  <div className="preset-chosen">
    <p>
      <strong>{preset?.label ?? "Custom provider"}</strong>
      {preset ? <span data-testid="provider-type">{` · ${typeLabels[type]} · ${keyNote(preset)}`}</span> : null}
      {preset ?
        (
          <>
            <br />
            <small className="muted">
              <HintText text={preset.hint} />. Its models are read from {preset.modelList}.
            </small>
          </>
        ) :
        null}
    </p>
    <button type="button" className="small" onClick={onBack}>Change provider</button>
  </div>
)

export const ConnectionFields = (props: {
  readonly preset: ProviderPreset | undefined
  readonly editing: boolean
  readonly id: string
  readonly onId: (id: string) => void
  readonly type: ProviderType
  readonly onType: (type: ProviderType) => void
  readonly baseUrl: string
  readonly onBaseUrl: (url: string) => void
  /** Back to the picker; undefined when editing. */
  readonly onBack: (() => void) | undefined
}) => {
  const help = baseUrlHelp[props.type]
  return (
    <>
      {props.onBack ? <Chosen preset={props.preset} type={props.type} onBack={props.onBack} /> : null}
      <div className="grid-2">
        {props.editing ? null : (
          <TextField
            label="Provider id"
            required
            value={props.id}
            onChange={props.onId}
            description="Lower-case letters, digits, - and _. Models are named id/model."
          />
        )}
        {props.preset ? null : (
          <Select
            label="Type"
            required
            value={props.type}
            onChange={(value) => props.onType(value as ProviderType)}
            options={providerTypes.map((type) => ({ value: type, label: typeLabels[type] }))}
            description="The API the server speaks."
          />
        )}
        <TextField
          label="Base URL"
          type="url"
          required
          value={props.baseUrl}
          onChange={props.onBaseUrl}
          placeholder={help.placeholder}
          description={props.preset ? `${help.description} Change it for another host or port.` : help.description}
        />
      </div>
    </>
  )
}

export const KeyField = ({ preset, editing, stored, value, onChange }: {
  readonly preset: ProviderPreset | undefined
  readonly editing: boolean
  /** The stored key, masked, when editing. */
  readonly stored: string | null
  readonly value: string
  readonly onChange: (key: string) => void
}) => {
  const required = !editing && preset?.key === "required"
  const description = stored
    ? "A key is stored (shown masked). Leave this empty to keep it."
    : required
    ? "Required by this provider. Stored encrypted; shown masked from then on."
    : preset
    ? "Optional: only if the server was started with a key. Stored encrypted; shown masked from then on."
    : "Stored encrypted; shown masked from then on."
  return (
    <TextField
      label="API key"
      type="password"
      required={required}
      value={value}
      onChange={onChange}
      placeholder={stored ? `Stored: ${stored}` : required ? "" : "none"}
      description={description}
    />
  )
}
