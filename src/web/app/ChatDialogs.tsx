/**
 * The chat's inline dialogs (never `prompt()`/`confirm()`): a new channel (name and bot), a new name
 * for a channel or a conversation, the keyboard shortcuts. A refused value is shown next to its field.
 */
import { useState } from "react"
import { formErrors } from "../shared/calls.ts"
import { Dialog } from "./ui/Dialog.tsx"
import { Select, TextField } from "./ui/Field.tsx"

interface Errors {
  readonly byField: Readonly<Record<string, string>>
  readonly other: string | undefined
}
const noErrors: Errors = { byField: {}, other: undefined }

/** Runs the dialog's work; a failure stays in the dialog, split by field. */
const useSubmit = (fields: ReadonlyArray<string>, work: () => Promise<void>) => {
  const [busy, setBusy] = useState(false)
  const [errors, setErrors] = useState<Errors>(noErrors)
  const submit = async () => {
    setBusy(true)
    setErrors(noErrors)
    try {
      await work()
    } catch (failure) {
      setErrors(formErrors(failure, fields))
    } finally {
      setBusy(false)
    }
  }
  return { busy, errors, submit: () => void submit() }
}

export const NewChannelDialog = ({ bots, onCreate, onClose }: {
  readonly bots: ReadonlyArray<{ readonly id: string; readonly name: string }>
  readonly onCreate: (name: string, botId: string) => Promise<void>
  readonly onClose: () => void
}) => {
  const [name, setName] = useState("")
  const [botId, setBotId] = useState(bots[0]?.id ?? "default")
  const { busy, errors, submit } = useSubmit(["name", "bot_id"], () => onCreate(name.trim(), botId))
  return (
    <Dialog title="New channel" open onClose={onClose} onSubmit={submit} submitLabel="Create" busy={busy} error={errors.other}>
      <TextField label="Name" value={name} onChange={setName} required error={errors.byField.name} />
      {bots.length > 1 ?
        (
          <Select
            label="Bot"
            value={botId}
            onChange={setBotId}
            options={bots.map((bot) => ({ value: bot.id, label: `${bot.name} (${bot.id})` }))}
            error={errors.byField.bot_id}
          />
        ) :
        null}
    </Dialog>
  )
}

export const RenameDialog = ({ title, label, field, initial, onRename, onClose }: {
  readonly title: string
  readonly label: string
  /** The key the server names the value by, so its refusal lands next to the field. */
  readonly field: string
  readonly initial: string
  readonly onRename: (value: string) => Promise<void>
  readonly onClose: () => void
}) => {
  const [value, setValue] = useState(initial)
  const { busy, errors, submit } = useSubmit([field], () => onRename(value.trim()))
  return (
    <Dialog title={title} open onClose={onClose} onSubmit={submit} submitLabel="Rename" busy={busy} error={errors.other}>
      <TextField label={label} value={value} onChange={setValue} required error={errors.byField[field]} />
    </Dialog>
  )
}

/** The chat's keyboard shortcuts, one list: the help shows it, the page binds it. */
export const shortcuts = [
  { keys: "Ctrl+Shift+O", does: "Start a new conversation" },
  { keys: "Ctrl+K", does: "Search the conversations" },
  { keys: "Shift+Esc", does: "Put the cursor in the message box" },
  { keys: "Esc", does: "Stop the answer being written" },
  { keys: "?", does: "Show these shortcuts" }
] as const

export const ShortcutsDialog = ({ onClose }: { readonly onClose: () => void }) => (
  <Dialog title="Keyboard shortcuts" open onClose={onClose}>
    <dl className="shortcuts">
      {shortcuts.map((shortcut) => (
        <div key={shortcut.keys}>
          <dt>
            <kbd>{shortcut.keys}</kbd>
          </dt>
          <dd>{shortcut.does}</dd>
        </div>
      ))}
    </dl>
  </Dialog>
)
