/**
 * Server settings that change at runtime (rate limits, system pause, upload limits, retention, …):
 * each with its description, type, value and where the value comes from; edited in a form fitting
 * its type, and reset to its default (the environment's value, else the built-in one). The log
 * level, a per-process setting, is here too.
 */
import { useEffect, useState } from "react"
import type { SettingView } from "../../../settings/Model.ts"
import { LogLevelControl } from "../logs/LogLevel.tsx"
import type { PageProps } from "../pages.ts"
import { allows } from "../scopes.ts"
import { Checkbox, ListField, TextField } from "../ui/Field.tsx"
import { Page, Section } from "../ui/Page.tsx"
import { useAction, useLoad } from "../ui/useLoad.ts"

/** How a value reads in a cell. */
const shown = (
  value: unknown
) => (Array.isArray(value)
  ? (value.length === 0 ? "(none)" : value.join(", "))
  : typeof value === "boolean"
  ? (value ? "on" : "off")
  : String(value))

/** The value a field's text stands for, by the setting's type. */
const parsed = (setting: SettingView, draft: unknown): unknown => (setting.type === "integer" ? Number(draft) : draft)

const SettingEditor = (
  { setting, canWrite, onSaved, auth }: Pick<PageProps, "auth"> & {
    readonly setting: SettingView
    readonly canWrite: boolean
    readonly onSaved: (list: ReadonlyArray<SettingView>) => void
  }
) => {
  const [draft, setDraft] = useState<unknown>(setting.value)
  useEffect(() => setDraft(setting.value), [setting.value])
  const action = useAction()
  const changed = JSON.stringify(parsed(setting, draft)) !== JSON.stringify(setting.value)
  const save = async () => {
    const list = await action.run(() =>
      auth.call((client) => client.settings.update({ payload: { [setting.key]: parsed(setting, draft) } }))
    )
    if (list) onSaved(list.settings)
  }
  const reset = async () => {
    const list = await action.run(() => auth.call((client) => client.settings.reset({ path: { key: setting.key } })))
    if (list) onSaved(list.settings)
  }
  const field = (() => {
    const label = setting.key
    const description = setting.description
    if (setting.type === "boolean") return <Checkbox label={label} description={description} checked={draft === true} onChange={setDraft} />
    if (setting.type === "list") {
      return (
        <ListField
          label={label}
          description={`${description}. Separate entries with commas.`}
          value={Array.isArray(draft) ? (draft as ReadonlyArray<string>) : []}
          onChange={setDraft}
        />
      )
    }
    return (
      <TextField
        label={label}
        description={description}
        type={setting.type === "integer" ? "number" : "text"}
        value={String(draft ?? "")}
        onChange={setDraft}
        placeholder={setting.type === "rate" ? "100/minute" : undefined}
      />
    )
  })()
  return (
    <li className="setting" data-setting={setting.key}>
      <form
        className="stack"
        aria-label={setting.key}
        onSubmit={(event) => {
          event.preventDefault()
          void save()
        }}
      >
        {canWrite ? field : (
          <p>
            <strong>{setting.key}</strong> <span data-testid={`value-${setting.key}`}>{shown(setting.value)}</span>
            <br />
            <small className="muted">{setting.description}</small>
          </p>
        )}
        {action.error ? <p role="alert" className="error">{action.error}</p> : null}
        <div className="row">
          <span className="chip">{setting.type}</span>
          <span className={`chip${setting.source === "stored" ? " stored" : ""}`} data-testid={`source-${setting.key}`}>
            {setting.source === "stored" ? "changed here" : "from environment"}
          </span>
          <span className="muted small-text">default {shown(setting.default)}</span>
          <span className="spacer" />
          {canWrite && setting.source === "stored"
            ? (
              <button
                type="button"
                className="small"
                disabled={action.busy}
                onClick={() => void reset()}
                aria-label={`Reset ${setting.key} to default`}
              >
                Reset to default
              </button>
            )
            : null}
          {canWrite
            ? (
              <button type="submit" className="small primary" disabled={action.busy || !changed} aria-label={`Save ${setting.key}`}>
                Save
              </button>
            )
            : null}
        </div>
      </form>
    </li>
  )
}

export default function SettingsPage({ auth }: PageProps) {
  const loaded = useLoad(() => auth.call((client) => client.settings.list()), [auth])
  const [settings, setSettings] = useState<ReadonlyArray<SettingView> | undefined>()
  useEffect(() => setSettings(loaded.data?.settings), [loaded.data])
  const canWrite = allows(auth, ["settings", "update"])
  return (
    <Page title="Settings" error={loaded.error} loading={loaded.loading && !settings}>
      {allows(auth, ["logs", "getLevel"]) ?
        (
          <Section title="Logging">
            <LogLevelControl auth={auth} />
          </Section>
        ) :
        null}
      <Section title="Runtime settings">
        <p className="muted">
          Stored values apply to every server process at once; a reset goes back to the environment's value (or the built-in default).
        </p>
        <ul className="settings">
          {(settings ?? []).map((setting) => (
            <SettingEditor key={setting.key} auth={auth} setting={setting} canWrite={canWrite} onSaved={setSettings} />
          ))}
        </ul>
      </Section>
    </Page>
  )
}
