/**
 * Picking names from a known list (tools, client tools, carapaces): a fieldset of checkboxes with a
 * filter when the list is long. Names picked that the list does not know (a tool of an integration
 * since removed) stay listed, so saving never drops them unseen.
 */
import { useState } from "react"
import "./picker.css"

export interface PickOption {
  readonly name: string
  readonly description?: string
  /** Where it comes from (`core`, `integration:msgbridge`), shown beside the name. */
  readonly source?: string
}

export const Picker = (props: {
  readonly legend: string
  readonly options: ReadonlyArray<PickOption>
  readonly picked: ReadonlyArray<string>
  readonly onChange: (picked: ReadonlyArray<string>) => void
}) => {
  const [filter, setFilter] = useState("")
  const known = new Set(props.options.map((option) => option.name))
  const all: ReadonlyArray<PickOption> = [
    ...props.options,
    ...props.picked.filter((name) => !known.has(name)).map((name) => ({ name, source: "unknown" }))
  ]
  const needle = filter.trim().toLowerCase()
  const shown = needle ? all.filter((option) => `${option.name} ${option.description ?? ""}`.toLowerCase().includes(needle)) : all
  const toggle = (name: string, on: boolean) =>
    props.onChange(on ? [...props.picked, name] : props.picked.filter((picked) => picked !== name))
  return (
    <fieldset className="picker">
      <legend>
        {props.legend} <span className="muted">({props.picked.length} picked)</span>
      </legend>
      {all.length > 8 ?
        (
          <input
            type="search"
            aria-label={`Filter ${props.legend.toLowerCase()}`}
            placeholder="Filter"
            value={filter}
            onChange={(event) => setFilter(event.target.value)}
          />
        ) :
        null}
      <div className="picker-options">
        {shown.map((option) => (
          <label key={option.name} className="picker-option" title={option.description}>
            <input
              type="checkbox"
              checked={props.picked.includes(option.name)}
              onChange={(event) => toggle(option.name, event.target.checked)}
            />
            <span className="mono">{option.name}</span>
            {option.source && option.source !== "core" ? <span className="chip">{option.source.replace(/^integration:/, "")}</span> : null}
          </label>
        ))}
        {all.length === 0 ? <p className="muted">None available.</p> : null}
      </div>
    </fieldset>
  )
}
