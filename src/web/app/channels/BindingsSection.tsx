/**
 * A channel's integration bindings: which integration's conversation (`<prefix><external id>`)
 * feeds the channel, its wake words, whether the bot's name counts as one, and its HUD preset.
 * The type and client id are what a binding is; the rest is edited in place.
 */
import { useState } from "react"
import type { Binding } from "../../../bindings/Model.ts"
import type { AuthSession } from "../../shared/session.ts"
import { allows } from "../scopes.ts"
import { ConfirmDialog, Dialog } from "../ui/Dialog.tsx"
import { Checkbox, ListField, Select, TextField } from "../ui/Field.tsx"
import { Section } from "../ui/Page.tsx"
import { useAction, useLoad } from "../ui/useLoad.ts"

type HudPreset = "default" | "none"

interface BindingDraft {
  readonly integration_type: string
  readonly client_id: string
  readonly wake_words: ReadonlyArray<string>
  readonly use_bot_wake_word: boolean
  readonly hud_preset: HudPreset
}

const newDraft: BindingDraft = { integration_type: "", client_id: "", wake_words: [], use_bot_wake_word: true, hud_preset: "default" }

const hudOptions = [
  { value: "default", label: "Default: the integration's status in the chat header" },
  { value: "none", label: "None" }
]

/** The integrations that say how their channels are bound (type and client id prefix). */
const useIntegrationTypes = (auth: AuthSession) =>
  useLoad(
    () =>
      allows(auth, ["integrations", "list"])
        ? auth.call((client) => client.integrations.list()).then(({ integrations }) =>
          integrations.flatMap((integration) => (integration.metadata ? [integration.metadata] : []))
        )
        : Promise.resolve([]),
    [auth]
  )

export const BindingsSection = ({ auth, channelId }: { readonly auth: AuthSession; readonly channelId: string }) => {
  const bindings = useLoad(() => auth.call((client) => client.bindings.list({ path: { id: channelId } })).then((list) => list.bindings), [
    auth,
    channelId
  ])
  const types = useIntegrationTypes(auth)
  const [editing, setEditing] = useState<{ readonly binding: Binding | undefined; readonly draft: BindingDraft } | undefined>()
  const [removing, setRemoving] = useState<Binding | undefined>()
  const save = useAction()
  const remove = useAction()
  const canCreate = allows(auth, ["bindings", "create"])
  const canUpdate = allows(auth, ["bindings", "update"])
  const canDelete = allows(auth, ["bindings", "delete"])

  const open = (binding: Binding | undefined) => {
    save.setError(undefined)
    setEditing({ binding, draft: binding ? { ...binding } : newDraft })
  }
  const change = (part: Partial<BindingDraft>) =>
    setEditing((current) => (current ? { ...current, draft: { ...current.draft, ...part } } : current))
  const submit = async () => {
    if (!editing) return
    const { binding, draft } = editing
    const behaviour = { wake_words: draft.wake_words, use_bot_wake_word: draft.use_bot_wake_word, hud_preset: draft.hud_preset }
    const done = await save.run(() =>
      binding
        ? auth.call((client) => client.bindings.update({ path: { id: channelId, binding_id: binding.id }, payload: behaviour }))
        : auth.call((client) =>
          client.bindings.create({
            path: { id: channelId },
            payload: { integration_type: draft.integration_type.trim(), client_id: draft.client_id.trim(), ...behaviour }
          })
        )
    )
    if (done) {
      setEditing(undefined)
      await bindings.reload()
    }
  }
  const confirmRemove = async () => {
    if (!removing) return
    const done = await remove.run(() =>
      auth.call((client) => client.bindings.delete({ path: { id: channelId, binding_id: removing.id } })).then(() => true)
    )
    if (done) {
      setRemoving(undefined)
      await bindings.reload()
    }
  }
  const pickType = (integration_type: string) => {
    const known = types.data?.find((type) => type.integration_type === integration_type)
    const prefix = editing?.draft.client_id ?? ""
    // Starting the client id with the integration's prefix saves looking it up.
    change(
      known && (prefix === "" || !prefix.includes(":")) ? { integration_type, client_id: known.client_id_prefix } : { integration_type }
    )
  }

  return (
    <Section
      title="Integration bindings"
      actions={canCreate
        ? (
          <button
            type="button"
            onClick={() => open(undefined)}
          >
            Add binding
          </button>
        )
        : null}
    >
      {bindings.error ? <p role="alert" className="error">{bindings.error}</p> : null}
      {bindings.data?.length ?
        (
          <div className="table-scroll">
            <table className="data" aria-label="Bindings">
              <thead>
                <tr>
                  <th>Integration</th>
                  <th>Client id</th>
                  <th>Wake words</th>
                  <th>Bot name wakes</th>
                  <th>HUD</th>
                  <th>
                    <span className="visually-hidden">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {bindings.data.map((binding) => (
                  <tr key={binding.id} data-testid="binding">
                    <td className="mono">{binding.integration_type}</td>
                    <td className="mono">{binding.client_id}</td>
                    <td>
                      <span className="chips">{binding.wake_words.map((word) => <span key={word} className="chip">{word}</span>)}</span>
                    </td>
                    <td>{binding.use_bot_wake_word ? "yes" : "no"}</td>
                    <td>{binding.hud_preset}</td>
                    <td>
                      <span className="row">
                        {canUpdate
                          ? (
                            <button
                              type="button"
                              className="small"
                              aria-label={`Edit binding ${binding.client_id}`}
                              onClick={() => open(binding)}
                            >
                              Edit
                            </button>
                          )
                          : null}
                        {canDelete ?
                          (
                            <button
                              type="button"
                              className="small danger"
                              aria-label={`Remove binding ${binding.client_id}`}
                              onClick={() => {
                                remove.setError(undefined)
                                setRemoving(binding)
                              }}
                            >
                              Remove
                            </button>
                          ) :
                          null}
                      </span>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        ) :
        bindings.data ?
        <p className="muted">No integration is bound to this channel.</p> :
        null}
      {editing ?
        (
          <Dialog
            title={editing.binding ? "Edit binding" : "Add binding"}
            open
            onClose={() => setEditing(undefined)}
            onSubmit={() => void submit()}
            submitLabel={editing.binding ? "Save" : "Add"}
            busy={save.busy}
            error={save.error}
          >
            {editing.binding ?
              (
                <p className="muted">
                  <span className="mono">{editing.binding.integration_type}</span> ·{" "}
                  <span className="mono">{editing.binding.client_id}</span>
                </p>
              ) :
              (
                <>
                  {types.data?.length ?
                    (
                      <Select
                        label="Integration type"
                        required
                        value={editing.draft.integration_type}
                        onChange={pickType}
                        options={[
                          { value: "", label: "Choose…" },
                          ...types.data.map((type) => ({ value: type.integration_type, label: type.integration_type }))
                        ]}
                      />
                    ) :
                    (
                      <TextField
                        label="Integration type"
                        required
                        value={editing.draft.integration_type}
                        onChange={(integration_type) => change({ integration_type })}
                      />
                    )}
                  <TextField
                    label="Client id"
                    required
                    value={editing.draft.client_id}
                    onChange={(client_id) => change({ client_id })}
                    description="<prefix><external id>, the prefix ending in ':' (msgbridge:<chat guid>)."
                  />
                </>
              )}
            <ListField label="Wake words" value={editing.draft.wake_words} onChange={(wake_words) => change({ wake_words })} />
            <Checkbox
              label="The bot's name is a wake word"
              checked={editing.draft.use_bot_wake_word}
              onChange={(use_bot_wake_word) => change({ use_bot_wake_word })}
            />
            <Select
              label="HUD preset"
              value={editing.draft.hud_preset}
              onChange={(hud_preset) => change({ hud_preset: hud_preset as HudPreset })}
              options={hudOptions}
            />
          </Dialog>
        ) :
        null}
      <ConfirmDialog
        open={removing !== undefined}
        title="Remove binding"
        message={
          <>
            Remove the binding of <span className="mono">{removing?.client_id}</span> ({removing?.integration_type}) from this channel?
          </>
        }
        confirmLabel="Remove"
        onConfirm={() => void confirmRemove()}
        onClose={() => setRemoving(undefined)}
        busy={remove.busy}
        error={remove.error}
      />
    </Section>
  )
}
