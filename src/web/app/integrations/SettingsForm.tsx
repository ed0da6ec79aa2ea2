/**
 * An integration's settings form, generated from its SETUP manifest's env_vars: each with its
 * label and control by type (a password, a number, a checkbox, a choice, a URL, a list), in its
 * group's section, advanced ones folded; its required mark, description, default and where its
 * value comes from now. A wrong value is refused by the server naming the key (422), shown under
 * its field. **Test connection** (when the integration declares a check) tries the form's values
 * without saving them. A field holds the stored
 * value only; the environment's value or the default shows as the placeholder, so saving sends what
 * the admin changed and nothing else. A secret is masked by the server; its field shows the mask,
 * and a mask left untouched is not sent (the stored secret stays). After saving, the form shows the
 * server's answer, masked again: a typed secret leaves the page.
 */
import { type ReactNode, useEffect, useState } from "react"
import type { IntegrationSettingsView } from "../../../integrations/Api.ts"
import { formErrors } from "../../shared/calls.ts"
import type { AuthSession } from "../../shared/session.ts"
import { allows } from "../scopes.ts"
import { Select, TextField } from "../ui/Field.tsx"
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

/** The settings by the manifest's groups, in the order each group first appears (ungrouped first). */
const sectionsOf = (settings: ReadonlyArray<Setting>) => {
  const groups: Array<{ group: string | null; settings: Array<Setting> }> = []
  for (const setting of settings) {
    const found = groups.find((entry) => entry.group === setting.group)
    if (found) found.settings.push(setting)
    else groups.push({ group: setting.group, settings: [setting] })
  }
  return groups.sort((a, b) => (a.group === null ? -1 : b.group === null ? 1 : 0))
}

/** One group's fields; its advanced ones folded below them. */
const SettingsGroup = ({ group, settings, render }: {
  readonly group: string | null
  readonly settings: ReadonlyArray<Setting>
  readonly render: (setting: Setting) => ReactNode
}) => {
  const main = settings.filter((setting) => !setting.advanced)
  const advanced = settings.filter((setting) => setting.advanced)
  const body = (
    <>
      {main.length > 0 ? <div className="grid-2 settings-fields">{main.map(render)}</div> : null}
      {advanced.length > 0 ?
        (
          <details className="advanced-settings">
            <summary>Advanced{group ? ` ${group.toLowerCase()}` : ""} settings ({advanced.length})</summary>
            <div className="grid-2 settings-fields">{advanced.map(render)}</div>
          </details>
        ) :
        null}
    </>
  )
  return group === null ? body : (
    <fieldset className="stack settings-group">
      <legend>{group}</legend>
      {body}
    </fieldset>
  )
}

const booleanOptions = (setting: Setting) => [
  { value: "", label: setting.source === "stored" ? "Not stored" : `${placeholderOf(setting) || "Not set"}` },
  { value: "true", label: "Yes" },
  { value: "false", label: "No" }
]

const choiceOptions = (setting: Setting) => [
  { value: "", label: setting.source === "stored" ? "Not stored" : `${placeholderOf(setting) || "Not set"}` },
  ...(setting.choices ?? []).map((choice) => ({ value: choice, label: choice }))
]

/** One setting's control, by its type; its label the manifest's (the key is in the description). */
const SettingField = ({ setting, value, disabled, error, onChange }: {
  readonly setting: Setting
  readonly value: string
  readonly disabled: boolean
  readonly error: string | undefined
  readonly onChange: (value: string) => void
}) => {
  const description = (
    <>
      {sentence(setting.description)}
      {setting.type === "list" && !/comma/i.test(setting.description) ? "Comma-separated. " : ""}
      {setting.default !== null && !setting.secret
        ? (
          <>
            Default: <code>{setting.default}</code>.{" "}
          </>
        )
        : null}
      {setting.secret ? "Secret: shown masked; leave the mask to keep it. " : ""}
      {sourceNote(setting)} <code className="muted">{setting.key}</code>
    </>
  )
  const common = { label: setting.label, required: setting.required, description, error }
  if (setting.type === "boolean" || setting.type === "enum") {
    return (
      <Select
        {...common}
        name={setting.key}
        value={value}
        options={setting.type === "boolean" ? booleanOptions(setting) : choiceOptions(setting)}
        onChange={onChange}
      />
    )
  }
  return (
    <TextField
      {...common}
      name={setting.key}
      type={setting.secret ? "password" : setting.type === "number" ? "number" : setting.type === "url" ? "url" : "text"}
      autoComplete={setting.secret ? "new-password" : "off"}
      disabled={disabled}
      value={value}
      placeholder={placeholderOf(setting)}
      onChange={onChange}
    />
  )
}

export const SettingsForm = ({ auth, id, onSaved }: { readonly auth: AuthSession; readonly id: string; readonly onSaved: () => void }) => {
  const loaded = useLoad(() => auth.call((client) => client.integrations.getSettings({ path: { id } })), [auth, id])
  const [view, setView] = useState<IntegrationSettingsView | undefined>()
  const [values, setValues] = useState<Record<string, string>>({})
  const [saved, setSaved] = useState(false)
  const save = useAction()
  const test = useAction()
  const [tested, setTested] = useState<{ readonly ok: boolean; readonly message: string } | undefined>()
  const [fieldErrors, setFieldErrors] = useState<Readonly<Record<string, string>>>({})
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
    setFieldErrors({})
    let refusal: unknown
    const next = await save.run(() =>
      auth.call((client) => client.integrations.putSettings({ path: { id }, payload: changes })).catch((error) => {
        refusal = error
        throw error
      })
    )
    if (!next) {
      if (refusal !== undefined) setFieldErrors(formErrors(refusal, view.settings.map((setting) => setting.key)).byField)
      return
    }
    adopt(next)
    setSaved(true)
    onSaved()
  }
  const runTest = async () => {
    setTested(undefined)
    const result = await test.run(() => auth.call((client) => client.integrations.testSettings({ path: { id }, payload: changes })))
    if (result) setTested(result)
  }
  const field = (setting: Setting) => (
    <SettingField
      key={setting.key}
      setting={setting}
      value={values[setting.key] ?? ""}
      disabled={!canWrite}
      error={fieldErrors[setting.key]}
      onChange={(value) => {
        setSaved(false)
        setValues({ ...values, [setting.key]: value })
      }}
    />
  )

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
        {sectionsOf(view.settings).map(({ group, settings }) => (
          <SettingsGroup key={group ?? ""} group={group} settings={settings} render={field} />
        ))}
        {save.error && Object.keys(fieldErrors).length === 0 ? <p role="alert" className="error">{save.error}</p> : null}
        {test.error ? <p role="alert" className="error">{test.error}</p> : null}
        {tested ?
          (
            <p role="status" className={tested.ok ? "test-ok" : "error"} data-testid="connection-test">
              {tested.ok ? "Connected: " : "Failed: "}
              {tested.message}
            </p>
          ) :
          null}
        {canWrite ?
          (
            <div className="row end">
              {saved ? <span role="status" className="muted">Saved.</span> : null}
              {view.can_test ?
                (
                  <button type="button" disabled={test.busy} onClick={() => void runTest()}>
                    {test.busy ? "Testing…" : "Test connection"}
                  </button>
                ) :
                null}
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
