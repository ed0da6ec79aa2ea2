/**
 * Bots: the list, a new bot (id, name, model, prompt, tools), and a bot's own page at
 * `/admin/bots/<id>` to edit the rest. The default bot has no delete control (the server refuses
 * to delete it anyway).
 */
import { useState } from "react"
import { type Bot, CreateBot, DEFAULT_BOT_ID } from "../../../bots/Model.ts"
import type { PageProps } from "../pages.ts"
import { navigate } from "../route.ts"
import { allows } from "../scopes.ts"
import { ConfirmDialog, Dialog } from "../ui/Dialog.tsx"
import { AppLink } from "../ui/Link.tsx"
import { Page } from "../ui/Page.tsx"
import { scrollRegion } from "../ui/scrollRegion.ts"
import { useAction, useConfirm, useLoad } from "../ui/useLoad.ts"
import { BotEdit } from "./BotEdit.tsx"
import { IdentityFields, ModelField, PromptField, ToolsPicker } from "./BotFields.tsx"
import { type BotDraft, emptyDraft, fieldsOf } from "./draft.ts"
import { useBotOptions } from "./options.ts"

// The server checks the new bot (a 422 names what is wrong), so the payload is built unchecked here.
const BotsPage = ({ auth, rest }: PageProps) => (rest[0] ? <BotEdit auth={auth} id={rest[0]} /> : <BotList auth={auth} />)
export default BotsPage

const BotList = ({ auth }: Pick<PageProps, "auth">) => {
  const bots = useLoad(() => auth.call((client) => client.bots.list()).then((list) => list.bots), [auth])
  const [creating, setCreating] = useState(false)
  const canCreate = allows(auth, ["bots", "create"])
  const canDelete = allows(auth, ["bots", "delete"])
  const deleting = useConfirm((bot: Bot) => auth.call((client) => client.bots.delete({ path: { id: bot.id } })), bots.reload)
  return (
    <Page
      title="Bots"
      loading={bots.loading}
      error={bots.error}
      actions={canCreate ? <button type="button" className="primary" onClick={() => setCreating(true)}>New bot</button> : null}
    >
      <div {...scrollRegion}>
        <table className="data" aria-label="Bots">
          <thead>
            <tr>
              <th>Bot</th>
              <th>Model</th>
              <th>Tools</th>
              <th>Source</th>
              <th>
                <span className="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {(bots.data ?? []).map((bot) => (
              <tr key={bot.id} data-testid={`bot-${bot.id}`}>
                <td>
                  <AppLink href={`/admin/bots/${encodeURIComponent(bot.id)}`}>{bot.name}</AppLink>
                  <div className="muted mono">{bot.id}</div>
                </td>
                <td className="mono">{bot.model ?? <span className="muted">default</span>}</td>
                <td>
                  <span className="chips">
                    {[...bot.tools, ...bot.client_tools.map((tool) => tool.name)].map((tool) => (
                      <span key={tool} className="chip">{tool}</span>
                    ))}
                  </span>
                </td>
                <td>{bot.source}</td>
                <td>
                  {canDelete && bot.id !== DEFAULT_BOT_ID ?
                    (
                      <button type="button" className="small danger" aria-label={`Delete ${bot.id}`} onClick={() => deleting.ask(bot)}>
                        Delete
                      </button>
                    ) :
                    null}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {bots.data?.length === 0 ? <p className="muted">No bots yet.</p> : null}
      {creating ? <NewBot auth={auth} onClose={() => setCreating(false)} /> : null}
      <ConfirmDialog
        {...deleting.dialog}
        title="Delete bot"
        message={<>Delete the bot “{deleting.target?.name}” ({deleting.target?.id})? Its channels stay but can no longer answer.</>}
        confirmLabel="Delete"
      />
    </Page>
  )
}

/** Mounted while open: the pickers' lists are read when the dialog opens. */
const NewBot = ({ auth, onClose }: Pick<PageProps, "auth"> & { readonly onClose: () => void }) => {
  const options = useBotOptions(auth)
  const [draft, setDraft] = useState<BotDraft>(emptyDraft)
  const create = useAction()
  const change = (part: Partial<BotDraft>) => setDraft((current) => ({ ...current, ...part }))
  const submit = async () => {
    const id = draft.id.trim()
    const bot = await create.run(() =>
      auth.call((client) => client.bots.create({ payload: new CreateBot({ id, ...fieldsOf(draft) }, true) }))
    )
    if (bot) {
      onClose()
      navigate(`/admin/bots/${encodeURIComponent(bot.id)}`)
    }
  }
  return (
    <Dialog
      title="New bot"
      open
      onClose={onClose}
      onSubmit={() => void submit()}
      submitLabel="Create"
      busy={create.busy}
      error={create.error}
      wide
    >
      <IdentityFields draft={draft} change={change} creating />
      <ModelField draft={draft} change={change} options={options} />
      <PromptField draft={draft} change={change} />
      <ToolsPicker draft={draft} change={change} options={options} />
    </Dialog>
  )
}
