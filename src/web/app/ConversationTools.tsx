/**
 * A conversation's own tools, above its messages: its settings (the model that answers it, its
 * instructions, its temperature: stored with the session, the runs use them) and its export as
 * Markdown or JSON, tool calls included. A conversation not yet sent has neither.
 */
import { useState } from "react"
import { formErrors } from "../shared/calls.ts"
import { conversationMarkdown, download, fileNameOf } from "../shared/exportMarkdown.ts"
import type { AuthSession } from "../shared/session.ts"
import { Dialog } from "./ui/Dialog.tsx"
import { Select, TextArea, TextField } from "./ui/Field.tsx"

interface Settings {
  readonly model: string
  readonly system_prompt: string
  readonly temperature: string
}

const fields = ["model", "system_prompt", "temperature"]

const SettingsDialog = ({ initial, models, onSave, onClose }: {
  readonly initial: Settings
  readonly models: ReadonlyArray<string>
  readonly onSave: (settings: Settings) => Promise<void>
  readonly onClose: () => void
}) => {
  const [settings, setSettings] = useState(initial)
  const [busy, setBusy] = useState(false)
  const [errors, setErrors] = useState<ReturnType<typeof formErrors>>({ byField: {}, other: undefined })
  const change = (field: keyof Settings) => (value: string) => setSettings((now) => ({ ...now, [field]: value }))
  const choices = [...new Set([...models, ...(initial.model ? [initial.model] : [])])]
  const submit = async () => {
    setBusy(true)
    try {
      await onSave(settings)
    } catch (failure) {
      setErrors(formErrors(failure, fields))
    } finally {
      setBusy(false)
    }
  }
  return (
    <Dialog title="Conversation settings" open onClose={onClose} onSubmit={() => void submit()} busy={busy} error={errors.other}>
      {choices.length > 0 ?
        (
          <Select
            label="Model"
            value={settings.model}
            onChange={change("model")}
            options={[{ value: "", label: "The bot's model" }, ...choices.map((model) => ({ value: model, label: model }))]}
            error={errors.byField.model}
          />
        ) :
        (
          <TextField
            label="Model"
            value={settings.model}
            onChange={change("model")}
            placeholder="The bot's model"
            error={errors.byField.model}
          />
        )}
      <TextArea
        label="Instructions"
        description="Added to the bot's own prompt, for this conversation only."
        value={settings.system_prompt}
        onChange={change("system_prompt")}
        rows={4}
        error={errors.byField.system_prompt}
      />
      <TextField
        label="Temperature"
        description="From 0 (steady) to 2 (inventive); empty for the bot's."
        type="number"
        value={settings.temperature}
        onChange={change("temperature")}
        error={errors.byField.temperature}
      />
    </Dialog>
  )
}

export const ConversationTools = ({ auth, sessionId, models, stored, onError }: {
  readonly auth: AuthSession
  readonly sessionId: string
  readonly models: ReadonlyArray<string>
  /** The conversation has been sent: the server holds it. */
  readonly stored: boolean
  readonly onError: (problem: unknown) => void
}) => {
  const [editing, setEditing] = useState<Settings | undefined>()
  if (!stored) return null
  const open = () =>
    void auth.call((client) => client.sessions.legacyGet({ path: { id: sessionId } })).then(
      (session) =>
        setEditing({
          model: session.model ?? "",
          system_prompt: session.system_prompt ?? "",
          temperature: session.temperature === null ? "" : String(session.temperature)
        }),
      onError
    )
  const save = async (settings: Settings) => {
    const temperature = settings.temperature.trim() === "" ? null : Number(settings.temperature)
    await auth.call((client) =>
      client.sessions.update({
        path: { id: sessionId },
        payload: {
          model: settings.model.trim() || null,
          system_prompt: settings.system_prompt.trim() || null,
          temperature
        }
      })
    )
    setEditing(undefined)
  }
  const exportAs = (kind: "markdown" | "json") =>
    void auth.call((client) => client.sessions.export({ path: { id: sessionId } })).then((exported) => {
      if (kind === "json") download(fileNameOf(exported.session.title, "json"), "application/json", JSON.stringify(exported, null, 2))
      else download(fileNameOf(exported.session.title, "md"), "text/markdown", conversationMarkdown(exported))
    }, onError)
  return (
    <div className="conversation-tools">
      {auth.can("sessions:write") ?
        <button type="button" className="small" onClick={open}>Settings</button> :
        null}
      <button type="button" className="small" onClick={() => exportAs("markdown")}>Export Markdown</button>
      <button type="button" className="small" onClick={() => exportAs("json")}>Export JSON</button>
      {editing ?
        <SettingsDialog initial={editing} models={models} onSave={save} onClose={() => setEditing(undefined)} /> :
        null}
    </div>
  )
}
