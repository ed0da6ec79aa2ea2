/**
 * Channels: the list, a new channel for a bot, and a channel's own page at `/admin/channels/<id>`
 * (settings, integration bindings, heartbeat, workspace files, sessions).
 */
import { useState } from "react"
import type { PageProps } from "../pages.ts"
import { navigate } from "../route.ts"
import { allows } from "../scopes.ts"
import { Dialog } from "../ui/Dialog.tsx"
import { Select, TextField } from "../ui/Field.tsx"
import { AppLink } from "../ui/Link.tsx"
import { Page, When } from "../ui/Page.tsx"
import { scrollRegion } from "../ui/scrollRegion.ts"
import { useAction, useLoad } from "../ui/useLoad.ts"
import { ChannelView } from "./ChannelView.tsx"

const ChannelsPage = ({ auth, rest }: PageProps) => (rest[0] ? <ChannelView auth={auth} id={rest[0]} /> : <ChannelList auth={auth} />)
export default ChannelsPage

const ChannelList = ({ auth }: Pick<PageProps, "auth">) => {
  const channels = useLoad(
    () => auth.call((client) => client.channels.list({ urlParams: { limit: 500, offset: 0 } })).then((list) => list.channels),
    [auth]
  )
  const [creating, setCreating] = useState(false)
  return (
    <Page
      title="Channels"
      loading={channels.loading}
      error={channels.error}
      actions={allows(auth, ["channels", "create"])
        ? <button type="button" className="primary" onClick={() => setCreating(true)}>New channel</button>
        : null}
    >
      <div {...scrollRegion}>
        <table className="data" aria-label="Channels">
          <thead>
            <tr>
              <th>Channel</th>
              <th>Bot</th>
              <th>Client id</th>
              <th>Settings</th>
              <th>Created</th>
            </tr>
          </thead>
          <tbody>
            {(channels.data ?? []).map((channel) => (
              <tr key={channel.id}>
                <td>
                  <AppLink href={`/admin/channels/${channel.id}`}>{channel.name}</AppLink>
                </td>
                <td className="mono">{channel.bot_id}</td>
                <td className="mono">{channel.client_id}</td>
                <td>
                  <span className="chips">
                    {channel.require_mention ? <span className="chip">mention</span> : null}
                    {channel.passive_memory ? <span className="chip">passive memory</span> : null}
                    {channel.workspace_enabled ? <span className="chip">workspace</span> : null}
                    {channel.model_override ? <span className="chip mono">{channel.model_override}</span> : null}
                  </span>
                </td>
                <td>
                  <When at={channel.created_at.toISOString()} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {channels.data?.length === 0 ? <p className="muted">No channels yet.</p> : null}
      {creating ? <NewChannel auth={auth} onClose={() => setCreating(false)} /> : null}
    </Page>
  )
}

const NewChannel = ({ auth, onClose }: Pick<PageProps, "auth"> & { readonly onClose: () => void }) => {
  const bots = useLoad(
    () => (allows(auth, ["bots", "list"])
      ? auth.call((client) => client.bots.list()).then((list) => list.bots)
      : Promise.resolve(undefined)),
    [auth]
  )
  const [name, setName] = useState("")
  const [botId, setBotId] = useState("default")
  const create = useAction()
  const submit = async () => {
    const channel = await create.run(() =>
      auth.call((client) =>
        client.channels.create({
          payload: { name, bot_id: botId, require_mention: false, passive_memory: false, workspace_enabled: false, model_override: null }
        })
      )
    )
    if (channel) navigate(`/admin/channels/${channel.id}`)
  }
  return (
    <Dialog
      title="New channel"
      open
      onClose={onClose}
      onSubmit={() => void submit()}
      submitLabel="Create"
      busy={create.busy}
      error={create.error}
    >
      <TextField label="Name" required value={name} onChange={setName} />
      {bots.data ?
        (
          <Select
            label="Bot"
            value={botId}
            onChange={setBotId}
            options={bots.data.map((bot) => ({ value: bot.id, label: `${bot.name} (${bot.id})` }))}
          />
        ) :
        <TextField label="Bot id" required value={botId} onChange={setBotId} />}
    </Dialog>
  )
}
