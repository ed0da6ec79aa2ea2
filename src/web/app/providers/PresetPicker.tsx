/**
 * The first step of adding a provider: the known providers (`providerPresets`), each with its hint
 * and whether it needs a key, and "Custom (OpenAI-compatible)" last. A radio group: arrow keys move
 * the choice, Enter goes on.
 */
import { useId } from "react"
import type { ProviderType } from "../../../providers/Model.ts"
import { type ProviderPreset, providerPresets } from "../../../providers/Presets.ts"

/** The choice that is no preset: the user gives the id, type and base URL. */
export const CUSTOM = "custom"

export const typeLabels: Readonly<Record<ProviderType, string>> = {
  openai: "OpenAI-compatible (chat completions)",
  anthropic: "Anthropic (Messages API)",
  gemini: "Google Gemini"
}

export const providerTypes = Object.keys(typeLabels) as ReadonlyArray<ProviderType>

export const keyNote = (preset: ProviderPreset | undefined) =>
  preset === undefined
    ? "A key if the server needs one"
    : preset.key === "required"
    ? "Needs an API key"
    : "No key needed, unless the server was started with one"

/** A hint's `quoted` parts as code. */
export const HintText = ({ text }: { readonly text: string }) => (
  <>{text.split("`").map((part, index) => (index % 2 === 1 ? <code key={index}>{part}</code> : part))}</>
)

const Choice = ({ group, value, label, hint, note, checked, onPick }: {
  readonly group: string
  readonly value: string
  readonly label: string
  readonly hint: string
  readonly note: string
  readonly checked: boolean
  readonly onPick: (value: string) => void
}) => {
  const labelId = useId()
  const hintId = useId()
  return (
    <label className="preset-option">
      <input
        type="radio"
        name={group}
        value={value}
        checked={checked}
        required
        aria-labelledby={labelId}
        aria-describedby={hintId}
        onChange={() => onPick(value)}
      />
      <span>
        <strong id={labelId}>{label}</strong>
        <small id={hintId}>
          <HintText text={hint} />. <em>{note}.</em>
        </small>
      </span>
    </label>
  )
}

export const PresetPicker = ({ picked, onPick }: { readonly picked: string; readonly onPick: (id: string) => void }) => {
  const group = useId()
  return (
    <fieldset className="preset-picker">
      <legend>Which provider?</legend>
      <div className="preset-options">
        {providerPresets.map((preset) => (
          <Choice
            key={preset.id}
            group={group}
            value={preset.id}
            label={preset.label}
            hint={preset.hint}
            note={keyNote(preset)}
            checked={picked === preset.id}
            onPick={onPick}
          />
        ))}
        <Choice
          group={group}
          value={CUSTOM}
          label="Custom (OpenAI-compatible)"
          hint="Any other server: you give its id, base URL and the API it speaks (OpenAI-compatible, Anthropic or Gemini)"
          note={keyNote(undefined)}
          checked={picked === CUSTOM}
          onPick={onPick}
        />
      </div>
    </fieldset>
  )
}
