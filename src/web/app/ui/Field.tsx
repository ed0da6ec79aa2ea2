/**
 * Form fields with their label, description and required mark. A secret field never shows the
 * stored value: the server sends it masked, and sending the mask back keeps the stored one.
 */
import { type ReactNode, useEffect, useId, useState } from "react"

interface Common {
  readonly label: string
  readonly description?: ReactNode
  readonly required?: boolean
  /** What was wrong with the value sent (see `formErrors`), shown under the field and read with it. */
  readonly error?: string | undefined
}

/** The field's description and error, as the control's `aria-describedby`. */
const describedBy = (props: Common, hint: string, problem: string) =>
  [props.description ? hint : undefined, props.error ? problem : undefined].filter(Boolean).join(" ") || undefined

const FieldError = ({ id, error }: { readonly id: string; readonly error: string | undefined }) =>
  error ? <small id={id} className="error field-error">{error}</small> : null

/**
 * The label's text, which names the control by id (`aria-labelledby`): the description inside the
 * `<label>` is the control's description, not part of its name.
 */
const Label = ({ id, label, required }: { readonly id: string; readonly label: string; readonly required?: boolean }) => (
  <span id={id}>
    {label}
    {required ? <abbr className="required" title="required" aria-hidden="true">*</abbr> : null}
  </span>
)

export const TextField = (
  props: Common & {
    readonly value: string
    readonly onChange: (value: string) => void
    readonly type?: "text" | "password" | "number" | "url" | "date" | "datetime-local"
    readonly placeholder?: string
    readonly autoComplete?: string
    readonly name?: string
    readonly disabled?: boolean
  }
) => {
  const hint = useId()
  const labelId = useId()
  const problem = useId()
  return (
    <label className="field">
      <Label id={labelId} label={props.label} required={props.required} />
      <input
        name={props.name}
        type={props.type ?? "text"}
        value={props.value}
        placeholder={props.placeholder}
        autoComplete={props.autoComplete ?? "off"}
        required={props.required}
        disabled={props.disabled}
        aria-labelledby={labelId}
        aria-describedby={describedBy(props, hint, problem)}
        aria-invalid={props.error ? true : undefined}
        onChange={(event) => props.onChange(event.target.value)}
      />
      {props.description ? <small id={hint}>{props.description}</small> : null}
      <FieldError id={problem} error={props.error} />
    </label>
  )
}

export const TextArea = (
  props: Common & {
    readonly value: string
    readonly onChange: (value: string) => void
    readonly rows?: number
    readonly monospace?: boolean
    readonly name?: string
  }
) => {
  const hint = useId()
  const labelId = useId()
  return (
    <label className="field">
      <Label id={labelId} label={props.label} required={props.required} />
      <textarea
        name={props.name}
        rows={props.rows ?? 4}
        className={props.monospace ? "mono" : undefined}
        value={props.value}
        required={props.required}
        aria-labelledby={labelId}
        aria-describedby={props.description ? hint : undefined}
        onChange={(event) => props.onChange(event.target.value)}
      />
      {props.description ? <small id={hint}>{props.description}</small> : null}
    </label>
  )
}

export const Checkbox = (
  props: Common & { readonly checked: boolean; readonly onChange: (checked: boolean) => void; readonly name?: string }
) => {
  const hint = useId()
  const labelId = useId()
  return (
    <label className="field checkbox">
      <span className="row">
        <input
          type="checkbox"
          name={props.name}
          checked={props.checked}
          aria-labelledby={labelId}
          aria-describedby={props.description ? hint : undefined}
          onChange={(event) => props.onChange(event.target.checked)}
        />
        <Label id={labelId} label={props.label} required={props.required} />
      </span>
      {props.description ? <small id={hint}>{props.description}</small> : null}
    </label>
  )
}

export const Select = (
  props: Common & {
    readonly value: string
    readonly onChange: (value: string) => void
    readonly options: ReadonlyArray<{ readonly value: string; readonly label: string }>
    readonly name?: string
  }
) => {
  const hint = useId()
  const labelId = useId()
  const problem = useId()
  return (
    <label className="field">
      <Label id={labelId} label={props.label} required={props.required} />
      <select
        name={props.name}
        value={props.value}
        required={props.required}
        aria-labelledby={labelId}
        aria-describedby={describedBy(props, hint, problem)}
        aria-invalid={props.error ? true : undefined}
        onChange={(event) => props.onChange(event.target.value)}
      >
        {props.options.map((option) => <option key={option.value} value={option.value}>{option.label}</option>)}
      </select>
      {props.description ? <small id={hint}>{props.description}</small> : null}
      <FieldError id={problem} error={props.error} />
    </label>
  )
}

const parseList = (text: string) => text.split(",").map((entry) => entry.trim()).filter((entry) => entry.length > 0)

/**
 * A list of strings edited as comma-separated text (wake words, fallback models). The text is kept
 * as typed (a trailing comma stays while the next entry is typed); a new value from outside
 * replaces it.
 */
export const ListField = (
  props: Common & {
    readonly value: ReadonlyArray<string>
    readonly onChange: (value: ReadonlyArray<string>) => void
    readonly name?: string
  }
) => {
  const [text, setText] = useState(() => props.value.join(", "))
  const joined = props.value.join("\u0000")
  useEffect(() => {
    if (parseList(text).join("\u0000") !== joined) setText(props.value.join(", "))
    // Only a value from outside (not the text typed) resets the text.
    // eslint-disable-next-line react-hooks/exhaustive-deps -- `joined` is the value; the text typed must not re-run this
  }, [joined])
  return (
    <TextField
      label={props.label}
      name={props.name}
      required={props.required}
      description={props.description ?? "Separate entries with commas."}
      value={text}
      onChange={(typed) => {
        setText(typed)
        props.onChange(parseList(typed))
      }}
    />
  )
}
