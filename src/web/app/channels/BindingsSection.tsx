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
import { scrollRegion } from "../ui/scrollRegion.ts"
import { useAction, useConfirm, useLoad } from "../ui/useLoad.ts"

type HudPreset = "default" | "none"

interface BindingDraft {
  readonly integration_type: string
  readonly client_id: string
  readonly wake_words: ReadonlyArray<string>
  readonly use_bot_wake_word: boolean
  readonly hud_preset: HudPreset
}

/** An integration that says how its channels are bound. */
interface IntegrationType {
  readonly integration_type: string
  readonly client_id_prefix: string
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

/**
 * The binding being added or edited (`binding` undefined for a new one) and its draft: opening,
 * changing and saving it; saved, the dialog closes and `after` runs (a reload).
 */
const useBindingEditor = (
  auth: AuthSession,
  channelId: string,
  types: ReadonlyArray<IntegrationType> | undefined,
  after: () => Promise<void>
) => {
  const [editing, setEditing] = useState<{ readonly binding: Binding | undefined; readonly draft: BindingDraft } | undefined>()
  const save = useAction()
  const open = (binding: Binding | undefined) => {
    save.setError(undefined)
    setEditing({ binding, draft: binding ? { ...binding } : newDraft })
  }
  const close = () => setEditing(undefined)
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
      await after()
    }
  }
  const pickType = (integration_type: string) => {
    const known = types?.find((type) => type.integration_type === integration_type)
    const prefix = editing?.draft.client_id ?? ""
    // Starting the client id with the integration's prefix saves looking it up.
    change(
      known && (prefix === "" || !prefix.includes(":")) ? { integration_type, client_id: known.client_id_prefix } : { integration_type }
    )
  }
  return { editing, open, close, change, submit, pickType, busy: save.busy, error: save.error }
}

const BindingsTable = ({ bindings, canUpdate, canDelete, onEdit, onRemove }: {
  readonly bindings: ReadonlyArray<Binding>
  readonly canUpdate: boolean
  readonly canDelete: boolean
  readonly onEdit: (binding: Binding) => void
  readonly onRemove: (binding: Binding) => void
}) => (
  <div {...scrollRegion}>
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
        {bindings.map((binding) => (
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
                      onClick={() => onEdit(binding)}
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
                      onClick={() => onRemove(binding)}
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
)

/** The add/edit dialog: a new binding names its integration type and client id; both edit the rest. */
const BindingDialog = ({ editor, types }: {
  readonly editor: ReturnType<typeof useBindingEditor>
  readonly types: ReadonlyArray<IntegrationType> | undefined
}) => {
  const { editing, change } = editor
  if (!editing) return null
  return (
    <Dialog
      title={editing.binding ? "Edit binding" : "Add binding"}
      open
      onClose={editor.close}
      onSubmit={() => void editor.submit()}
      submitLabel={editing.binding ? "Save" : "Add"}
      busy={editor.busy}
      error={editor.error}
    >
      {editing.binding ?
        (
          <p className="muted">
            <span className="mono">{editing.binding.integration_type}</span> · <span className="mono">{editing.binding.client_id}</span>
          </p>
        ) :
        (
          <>
            {types?.length ?
              (
                <Select
                  label="Integration type"
                  required
                  value={editing.draft.integration_type}
                  onChange={editor.pickType}
                  options={[
                    { value: "", label: "Choose…" },
                    ...types.map((type) => ({ value: type.integration_type, label: type.integration_type }))
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
  )
}

export const BindingsSection = ({ auth, channelId }: { readonly auth: AuthSession; readonly channelId: string }) => {
  const bindings = useLoad(() => auth.call((client) => client.bindings.list({ path: { id: channelId } })).then((list) => list.bindings), [
    auth,
    channelId
  ])
  const types = useIntegrationTypes(auth)
  const editor = useBindingEditor(auth, channelId, types.data, bindings.reload)
  const removing = useConfirm(
    (binding: Binding) => auth.call((client) => client.bindings.delete({ path: { id: channelId, binding_id: binding.id } })),
    bindings.reload
  )
  return (
    <Section
      title="Integration bindings"
      actions={allows(auth, ["bindings", "create"])
        ? (
          <button
            type="button"
            onClick={() => editor.open(undefined)}
          >
            Add binding
          </button>
        )
        : null}
    >
      {bindings.error ? <p role="alert" className="error">{bindings.error}</p> : null}
      {bindings.data?.length ?
        (
          <BindingsTable
            bindings={bindings.data}
            canUpdate={allows(auth, ["bindings", "update"])}
            canDelete={allows(auth, ["bindings", "delete"])}
            onEdit={editor.open}
            onRemove={removing.ask}
          />
        ) :
        bindings.data ?
        <p className="muted">No integration is bound to this channel.</p> :
        null}
      <BindingDialog editor={editor} types={types.data} />
      <ConfirmDialog
        {...removing.dialog}
        title="Remove binding"
        message={
          <>
            Remove the binding of <span className="mono">{removing.target?.client_id}</span>{" "}
            ({removing.target?.integration_type}) from this channel?
          </>
        }
        confirmLabel="Remove"
      />
    </Section>
  )
}
