/**
 * An integration's settings form, generated from its SETUP manifest's env_vars: each with its
 * required mark, description, default and where its value comes from now. A field holds the stored
 * value only; the environment's value or the default shows as the placeholder, so saving sends what
 * the admin changed and nothing else. A secret is masked by the server; its field shows the mask,
 * and a mask left untouched is not sent (the stored secret stays). After saving, the form shows the
 * server's answer, masked again: a typed secret leaves the page.
 */
import { useEffect, useState } from "react"
import type { IntegrationSettingsView } from "../../../integrations/Api.ts"
import type { AuthSession } from "../../shared/session.ts"
import { allows } from "../scopes.ts"
import { TextField } from "../ui/Field.tsx"
import { Section } from "../ui/Page.tsx"
import { useAction, useLoad } from "../ui/useLoad.ts"

type Setting = IntegrationSettingsView["settings"][number]

/** What a field starts with: the stored value (a secret's is the mask), else empty. */
const initialOf = (setting: Setting) => (setting.source === "stored" ? (setting.value ?? "") : "")

const placeholderOf = (setting: Setting) => {
  if (setting.source === "environment") return setting.secret ? "set in the environment" : `${setting.value ?? ""} (from the environment)`
  if (setting.source === "default") return `${setting.value ?? ""} (default)`
  return ""
}

/** A manifest's description as a sentence followed by the notes. */
const sentence = (text: string) => (text === "" ? "" : /[.!?:]$/.test(text) ? `${text} ` : `${text}. `)

const sourceNote = (setting: Setting) =>
  setting.source === "stored"
    ? "Stored here."
    : setting.source === "environment"
    ? "From the server's environment."
    : setting.source === "default"
    ? "The manifest's default."
    : "Not set."

export const SettingsForm = ({ auth, id, onSaved }: { readonly auth: AuthSession; readonly id: string; readonly onSaved: () => void }) => {
  const loaded = useLoad(() => auth.call((client) => client.integrations.getSettings({ path: { id } })), [auth, id])
  const [view, setView] = useState<IntegrationSettingsView | undefined>()
  const [values, setValues] = useState<Record<string, string>>({})
  const [saved, setSaved] = useState(false)
  const save = useAction()
  const canWrite = allows(auth, ["integrations", "putSettings"])

  const adopt = (next: IntegrationSettingsView) => {
    setView(next)
    setValues(Object.fromEntries(next.settings.map((setting) => [setting.key, initialOf(setting)])))
  }
  useEffect(() => {
    if (loaded.data) adopt(loaded.data)
  }, [loaded.data])

  if (!view) return loaded.error ? <p role="alert" className="error">{loaded.error}</p> : null
  if (view.settings.length === 0) return null

  const changes = Object.fromEntries(
    view.settings
      .filter((setting) => (values[setting.key] ?? "") !== initialOf(setting))
      // An emptied field forgets the stored value (null); the server falls back to the environment or default.
      .map((setting) => [setting.key, values[setting.key] === "" ? null : values[setting.key]!])
  )
  const submit = async () => {
    setSaved(false)
    const next = await save.run(() => auth.call((client) => client.integrations.putSettings({ path: { id }, payload: changes })))
    if (!next) return
    adopt(next)
    setSaved(true)
    onSaved()
  }

  return (
    <Section title="Settings">
      <form
        className="stack"
        aria-label="Settings"
        // A required setting may come from the environment with its field empty: the server judges.
        noValidate
        onSubmit={(event) => {
          event.preventDefault()
          void submit()
        }}
      >
        <div className="grid-2">
          {view.settings.map((setting) => (
            <TextField
              key={setting.key}
              name={setting.key}
              label={setting.key}
              required={setting.required}
              type={setting.secret ? "password" : "text"}
              autoComplete={setting.secret ? "new-password" : "off"}
              disabled={!canWrite}
              value={values[setting.key] ?? ""}
              placeholder={placeholderOf(setting)}
              onChange={(value) => {
                setSaved(false)
                setValues({ ...values, [setting.key]: value })
              }}
              description={
                <>
                  {sentence(setting.description)}
                  {setting.default !== null && !setting.secret
                    ? (
                      <>
                        Default: <code>{setting.default}</code>.
                      </>
                    )
                    : null}
                  {setting.secret ? "Secret: shown masked; leave the mask to keep it. " : ""}
                  {sourceNote(setting)}
                </>
              }
            />
          ))}
        </div>
        {save.error ? <p role="alert" className="error">{save.error}</p> : null}
        {canWrite ?
          (
            <div className="row end">
              {saved ? <span role="status" className="muted">Saved.</span> : null}
              <button type="button" disabled={Object.keys(changes).length === 0 || save.busy} onClick={() => adopt(view)}>
                Discard changes
              </button>
              <button type="submit" className="primary" disabled={Object.keys(changes).length === 0 || save.busy}>Save settings</button>
            </div>
          ) :
          null}
      </form>
    </Section>
  )
}
