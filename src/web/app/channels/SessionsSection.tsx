/** A channel's sessions, most recently active first, each opening in the chat. */
import type { Channel } from "../../../channels/Model.ts"
import type { AuthSession } from "../../shared/session.ts"
import { AppLink } from "../ui/Link.tsx"
import { Section, When } from "../ui/Page.tsx"
import { scrollRegion } from "../ui/scrollRegion.ts"
import { useLoad } from "../ui/useLoad.ts"

export const SessionsSection = ({ auth, channel }: { readonly auth: AuthSession; readonly channel: Channel }) => {
  // Sessions are found by the channel's (bot, client id); those another channel made are left out.
  const sessions = useLoad(
    () =>
      auth
        .call((client) => client.sessions.legacyList({ urlParams: { bot_id: channel.bot_id, client_id: channel.client_id, limit: 200 } }))
        .then((list) => list.filter((session) => session.channel_id === null || session.channel_id === channel.id)),
    [auth, channel.id, channel.bot_id, channel.client_id]
  )
  return (
    <Section title="Sessions">
      {sessions.error ? <p role="alert" className="error">{sessions.error}</p> : null}
      {sessions.data?.length ?
        (
          <div {...scrollRegion}>
            <table className="data" aria-label="Sessions">
              <thead>
                <tr>
                  <th>Session</th>
                  <th>Last active</th>
                  <th>Started</th>
                </tr>
              </thead>
              <tbody>
                {sessions.data.map((session) => (
                  <tr key={session.id}>
                    <td>
                      <AppLink href={`/chat/${session.id}`}>{session.title ?? "Untitled"}</AppLink>
                      {session.id === channel.active_session_id ? <span className="chip">active</span> : null}
                    </td>
                    <td>
                      <When at={session.last_active.toISOString()} />
                    </td>
                    <td>
                      <When at={session.created_at.toISOString()} />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        ) :
        sessions.data ?
        <p className="muted">No sessions yet.</p> :
        null}
    </Section>
  )
}
