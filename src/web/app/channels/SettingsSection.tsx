/** A channel's settings: mention required, passive memory, workspace, and a model over the bot's. */
import { useEffect, useState } from "react"
import type { Channel } from "../../../channels/Model.ts"
import type { AuthSession } from "../../shared/session.ts"
import { loadModelIds, modelOptions } from "../bots/models.ts"
import { allows } from "../scopes.ts"
import { EditForm } from "../ui/EditForm.tsx"
import { Checkbox, Select, TextField } from "../ui/Field.tsx"
import { Section } from "../ui/Page.tsx"
import { useAction } from "../ui/useLoad.ts"

interface Settings {
  readonly name: string
  readonly require_mention: boolean
  readonly passive_memory: boolean
  readonly workspace_enabled: boolean
  readonly model_override: string
}

const settingsOf = (channel: Channel): Settings => ({
  name: channel.name,
  require_mention: channel.require_mention,
  passive_memory: channel.passive_memory,
  workspace_enabled: channel.workspace_enabled,
  model_override: channel.model_override ?? ""
})

export const SettingsSection = (
  { auth, channel, onSaved }: { readonly auth: AuthSession; readonly channel: Channel; readonly onSaved: () => Promise<void> }
) => {
  const [settings, setSettings] = useState(() => settingsOf(channel))
  const [models, setModels] = useState<ReadonlyArray<string>>([])
  const [saved, setSaved] = useState(false)
  const save = useAction()
  useEffect(() => setSettings(settingsOf(channel)), [channel])
  useEffect(() => void loadModelIds(auth).then(setModels, () => setModels([])), [auth])
  const canWrite = allows(auth, ["channels", "update"])
  const change = (part: Partial<Settings>) => {
    setSaved(false)
    setSettings((current) => ({ ...current, ...part }))
  }
  const submit = async () => {
    const updated = await save.run(() =>
      auth.call((client) =>
        client.channels.update({
          path: { id: channel.id },
          payload: { ...settings, model_override: settings.model_override === "" ? null : settings.model_override }
        })
      )
    )
    if (updated) {
      setSaved(true)
      await onSaved()
    }
  }
  return (
    <Section title="Settings">
      <EditForm
        label="Channel settings"
        canWrite={canWrite}
        onSubmit={() => void submit()}
        submitLabel="Save settings"
        busy={save.busy}
        error={save.error}
        saved={saved}
      >
        <div className="grid-2">
          <TextField label="Name" required value={settings.name} onChange={(name) => change({ name })} />
          <Select
            label="Model override"
            value={settings.model_override}
            onChange={(model_override) => change({ model_override })}
            options={modelOptions(models, settings.model_override || null, "The bot's model")}
          />
          <Checkbox
            label="Require a mention"
            description="The bot answers only when named (or a wake word is said)."
            checked={settings.require_mention}
            onChange={(require_mention) => change({ require_mention })}
          />
          <Checkbox
            label="Passive memory"
            description="Messages the bot does not answer are still remembered."
            checked={settings.passive_memory}
            onChange={(passive_memory) => change({ passive_memory })}
          />
          <Checkbox
            label="Workspace enabled"
            description="The channel has a folder of files the bot reads and writes."
            checked={settings.workspace_enabled}
            onChange={(workspace_enabled) => change({ workspace_enabled })}
          />
        </div>
      </EditForm>
    </Section>
  )
}
