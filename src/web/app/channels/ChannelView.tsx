/** A channel's own page: each part shows only when the user's scopes allow reading it. */
import { useState } from "react"
import type { AuthSession } from "../../shared/session.ts"
import { navigate } from "../route.ts"
import { allows } from "../scopes.ts"
import { ConfirmDialog } from "../ui/Dialog.tsx"
import { AppLink } from "../ui/Link.tsx"
import { Page } from "../ui/Page.tsx"
import { useAction, useLoad } from "../ui/useLoad.ts"
import { BindingsSection } from "./BindingsSection.tsx"
import { HeartbeatSection } from "./HeartbeatSection.tsx"
import { SessionsSection } from "./SessionsSection.tsx"
import { SettingsSection } from "./SettingsSection.tsx"
import { WorkspaceSection } from "./WorkspaceSection.tsx"
import "./channels.css"

export const ChannelView = ({ auth, id }: { readonly auth: AuthSession; readonly id: string }) => {
  const channel = useLoad(() => auth.call((client) => client.channels.get({ path: { id } })), [auth, id])
  const [deleting, setDeleting] = useState(false)
  const remove = useAction()
  const confirmDelete = async () => {
    const done = await remove.run(() => auth.call((client) => client.channels.delete({ path: { id } })).then(() => true))
    if (done) navigate("/admin/channels")
  }
  const data = channel.data
  return (
    <Page
      title={data ? `Channel: ${data.name}` : "Channel"}
      loading={channel.loading}
      error={channel.error}
      actions={
        <>
          <AppLink href="/admin/channels">All channels</AppLink>
          {allows(auth, ["channels", "delete"])
            ? <button type="button" className="danger" onClick={() => setDeleting(true)}>Delete channel</button>
            : null}
        </>
      }
    >
      {data ?
        (
          <>
            <p className="muted">
              Bot <span className="mono">{data.bot_id}</span> · client id <span className="mono">{data.client_id}</span>
            </p>
            <SettingsSection auth={auth} channel={data} onSaved={channel.reload} />
            {allows(auth, ["bindings", "list"]) ? <BindingsSection auth={auth} channelId={id} /> : null}
            {allows(auth, ["heartbeats", "get"]) ? <HeartbeatSection auth={auth} channelId={id} /> : null}
            {allows(auth, ["workspaces", "list"]) ? <WorkspaceSection auth={auth} channelId={id} enabled={data.workspace_enabled} /> : null}
            {allows(auth, ["sessions", "legacyList"]) ? <SessionsSection auth={auth} channel={data} /> : null}
          </>
        ) :
        null}
      <ConfirmDialog
        open={deleting}
        title="Delete channel"
        message={<>Delete the channel “{data?.name}”? Its sessions stay.</>}
        confirmLabel="Delete"
        onConfirm={() => void confirmDelete()}
        onClose={() => setDeleting(false)}
        busy={remove.busy}
        error={remove.error}
      />
    </Page>
  )
}
