/**
 * Making a scoped API key: a name, an optional expiry, and its scopes, from a preset or picked from
 * the server's scope catalogue (grouped as the catalogue is, each with its description). The new
 * value is shown once, in this dialog; closing it drops the value from the page for good.
 */
import { Array as Arr } from "effect"
import { useState } from "react"
import { isScope } from "../../../auth/Scopes.ts"
import type { ScopeCatalogue } from "../../../discover/Model.ts"
import type { AuthSession } from "../../shared/session.ts"
import { CopyValue } from "../ui/Copy.tsx"
import { Dialog } from "../ui/Dialog.tsx"
import { Select, TextField } from "../ui/Field.tsx"
import { useAction } from "../ui/useLoad.ts"

const CUSTOM = ""

/** The preset whose scopes are exactly `chosen`, else custom. */
const presetMatching = (catalogue: ScopeCatalogue, chosen: ReadonlySet<string>) =>
  catalogue.presets.find((preset) => preset.scopes.length === chosen.size && preset.scopes.every((s) => chosen.has(s)))?.id ?? CUSTOM

/** The end of the chosen day (local time): a key "expiring on" a day works through that day. */
const endOfDay = (day: string) => new Date(`${day}T23:59:59`)

export const NewKeyDialog = ({ auth, catalogue, open, onClose, onCreated }: {
  readonly auth: AuthSession
  readonly catalogue: ScopeCatalogue
  readonly open: boolean
  readonly onClose: () => void
  readonly onCreated: () => void
}) => {
  const [name, setName] = useState("")
  const [expires, setExpires] = useState("")
  const [chosen, setChosen] = useState<ReadonlySet<string>>(new Set())
  /** The value of the key just made: held in this dialog's state only, until it closes. */
  const [created, setCreated] = useState<{ readonly name: string; readonly key: string } | undefined>()
  const action = useAction()

  const close = () => {
    setName("")
    setExpires("")
    setChosen(new Set())
    setCreated(undefined)
    action.setError(undefined)
    onClose()
  }
  const toggle = (scope: string, on: boolean) => {
    const next = new Set(chosen)
    if (on) next.add(scope)
    else next.delete(scope)
    setChosen(next)
  }
  const applyPreset = (id: string) => {
    const preset = catalogue.presets.find((p) => p.id === id)
    if (preset) setChosen(new Set(preset.scopes))
  }
  const create = async () => {
    if (chosen.size === 0) return action.setError("Choose at least one scope, or a preset.")
    // The catalogue's names come from the server; each is checked against this build's catalogue.
    const [unknown, scopes] = Arr.partition(chosen, isScope)
    if (unknown.length > 0) return action.setError(`Unknown scope: ${unknown.join(", ")}`)
    const answer = await action.run(() =>
      auth.call((client) =>
        client.apiKeys.create({ payload: { name: name.trim(), scopes, expires_at: expires ? endOfDay(expires) : null } })
      )
    )
    if (answer) {
      setCreated({ name: answer.name, key: answer.key })
      onCreated()
    }
  }

  if (created) {
    return (
      <Dialog title="Key created" open={open} onClose={close}>
        <p>
          This is the value of <strong>{created.name}</strong>. Copy it now: it is shown this once, and Cairn keeps only a hash of it.
        </p>
        <CopyValue value={created.key} label="New key value" />
      </Dialog>
    )
  }
  return (
    <Dialog
      title="New API key"
      open={open}
      onClose={close}
      onSubmit={() => void create()}
      submitLabel="Create key"
      busy={action.busy}
      error={action.error}
      wide
    >
      <div className="grid-2">
        <TextField label="Name" required value={name} onChange={setName} description="Who or what uses this key." />
        <TextField
          label="Expires on"
          type="date"
          value={expires}
          onChange={setExpires}
          description="Leave empty for a key that does not expire."
        />
      </div>
      <Select
        label="Preset"
        value={presetMatching(catalogue, chosen)}
        onChange={applyPreset}
        options={[
          { value: CUSTOM, label: "Custom (pick scopes below)" },
          ...catalogue.presets.map((p) => ({ value: p.id, label: p.name }))
        ]}
        description="A preset picks the scopes a kind of client needs; change them below as you like."
      />
      <div className="scope-picker" role="group" aria-label="Scopes">
        {catalogue.groups.map((group) => (
          <fieldset key={group.name} className="scope-group">
            <legend>{group.name}</legend>
            {group.scopes.map((scope) => (
              <label key={scope.name} className="scope-option">
                <input type="checkbox" checked={chosen.has(scope.name)} onChange={(event) => toggle(scope.name, event.target.checked)} />
                <span>
                  <code>{scope.name}</code>
                  <small className="muted">
                    {scope.description}
                    {scope.deprecated_for ? ` (deprecated: use ${scope.deprecated_for})` : ""}
                  </small>
                </span>
              </label>
            ))}
          </fieldset>
        ))}
      </div>
      <p className="muted" aria-live="polite">{chosen.size} scope{chosen.size === 1 ? "" : "s"} chosen.</p>
    </Dialog>
  )
}
