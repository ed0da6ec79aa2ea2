/**
 * The chat: channels and their sessions in a sidebar (create, rename, delete, as the user's scopes
 * allow) and the open conversation. A new conversation gets its id here and is created by its
 * first message (the server creates a session id it has not seen).
 */
import { useCallback, useEffect, useRef, useState } from "react"
import { describeError } from "../shared/calls.ts"
import { type AuthSession } from "../shared/session.ts"
import { Conversation, type SessionRef } from "./Conversation.tsx"
import { ChannelHud } from "./integrations/Hud.tsx"
import { navigate } from "./route.ts"

interface ChannelView {
  readonly id: string
  readonly name: string
  readonly bot_id: string
  readonly client_id: string
}
interface SessionView {
  readonly id: string
  readonly title: string | null
  readonly bot_id: string
  readonly client_id: string
}

/** Conversations started here but not yet sent: their id is ours until the first message. */
const drafts = new Map<string, SessionRef>()

export const ChatPage = ({ auth, sessionId }: { readonly auth: AuthSession; readonly sessionId: string | undefined }) => {
  const [channels, setChannels] = useState<ReadonlyArray<ChannelView>>([])
  const [bots, setBots] = useState<ReadonlyArray<{ id: string; name: string }>>([])
  const [channel, setChannel] = useState<ChannelView | undefined>()
  const [sessions, setSessions] = useState<ReadonlyArray<SessionView>>([])
  const [current, setCurrent] = useState<SessionRef | undefined>()
  const [error, setError] = useState<string | undefined>()
  const [menuOpen, setMenuOpen] = useState(false)
  const canWriteChannels = auth.can("channels:write")
  const canWriteSessions = auth.can("sessions:write")

  // A function expression: in a .tsx file an arrow's `<A>` would read as JSX.
  const attempt = useCallback(async function attempt<A>(work: () => Promise<A>): Promise<A | undefined> {
    try {
      setError(undefined)
      return await work()
    } catch (failure) {
      setError(describeError(failure))
      return undefined
    }
  }, [])

  const loadChannels = useCallback(async () => {
    if (!auth.can("channels:read")) return
    const list = await attempt(() => auth.call((client) => client.channels.list({ urlParams: { limit: 500, offset: 0 } })))
    if (list) setChannels(list.channels)
  }, [auth, attempt])

  const loadSessions = useCallback(async () => {
    if (!channel || !auth.can("sessions:read")) return setSessions([])
    const list = await attempt(() =>
      auth.call((client) => client.sessions.legacyList({ urlParams: { bot_id: channel.bot_id, client_id: channel.client_id, limit: 100 } }))
    )
    if (list) setSessions(list)
  }, [auth, attempt, channel])

  useEffect(() => {
    void loadChannels()
    if (auth.can("bots:read")) void attempt(() => auth.call((client) => client.bots.legacyList())).then((list) => list && setBots(list))
  }, [auth, attempt, loadChannels])
  useEffect(() => void loadSessions(), [loadSessions])

  // The open conversation: a stored session, or a draft started here.
  useEffect(() => {
    if (!sessionId) return setCurrent(undefined)
    const draft = drafts.get(sessionId)
    if (draft) return setCurrent(draft)
    void attempt(() => auth.call((client) => client.sessions.legacyGet({ path: { id: sessionId } }))).then((found) => {
      if (found) setCurrent({ id: found.id, bot_id: found.bot_id, client_id: found.client_id })
    })
  }, [auth, attempt, sessionId])
  // Opening a conversation selects its channel in the sidebar (once: the user may pick another).
  const synced = useRef<string | undefined>(undefined)
  useEffect(() => {
    if (!current || synced.current === current.id) return
    const match = channels.find((c) => c.bot_id === current.bot_id && c.client_id === current.client_id)
    if (!match) return
    synced.current = current.id
    setChannel(match)
  }, [channels, current])

  const createChannel = async () => {
    const name = window.prompt("Name of the new channel")?.trim()
    if (!name) return
    const botId = bots.length <= 1
      ? (bots[0]?.id ?? "default")
      : window.prompt(`Bot (${bots.map((b) => b.id).join(", ")})`, bots[0]!.id)?.trim()
    if (!botId) return
    const made = await attempt(() =>
      auth.call((client) => client.channels.ensure({ payload: { client_id: `web:${crypto.randomUUID()}`, bot_id: botId, name } }))
    )
    if (!made) return
    await loadChannels()
    setChannel(made)
  }
  const renameChannel = async (target: ChannelView) => {
    const name = window.prompt("New name", target.name)?.trim()
    if (!name || name === target.name) return
    await attempt(() => auth.call((client) => client.channels.update({ path: { id: target.id }, payload: { name } })))
    await loadChannels()
  }
  const deleteChannel = async (target: ChannelView) => {
    if (!window.confirm(`Delete the channel “${target.name}”?`)) return
    await attempt(() => auth.call((client) => client.channels.delete({ path: { id: target.id } })))
    if (channel?.id === target.id) setChannel(undefined)
    await loadChannels()
  }
  const newSession = () => {
    if (!channel) return
    const id = crypto.randomUUID()
    drafts.set(id, { id, bot_id: channel.bot_id, client_id: channel.client_id })
    setMenuOpen(false)
    navigate(`/chat/${id}`)
  }
  const renameSession = async (target: SessionView) => {
    const title = window.prompt("New title", target.title ?? "")?.trim()
    if (!title) return
    await attempt(() => auth.call((client) => client.sessions.legacyUpdate({ path: { id: target.id }, payload: { title } })))
    await loadSessions()
  }
  const deleteSession = async (target: SessionView) => {
    if (!window.confirm(`Delete the conversation “${target.title ?? "Untitled"}”?`)) return
    await attempt(() => auth.call((client) => client.sessions.legacyDelete({ path: { id: target.id } })))
    if (target.id === sessionId) navigate("/")
    await loadSessions()
  }

  return (
    <div className={`layout${menuOpen ? " menu-open" : ""}`}>
      <header className="chat-head">
        <button
          type="button"
          className="icon menu-toggle"
          aria-label="Conversations"
          aria-expanded={menuOpen}
          onClick={() => setMenuOpen(!menuOpen)}
        >
          ☰
        </button>
        <strong data-testid="chat-channel">{channel?.name ?? ""}</strong>
        <span className="spacer" />
        {channel ? <ChannelHud key={channel.id} auth={auth} channelId={channel.id} /> : null}
      </header>
      <nav className="sidebar" aria-label="Channels and conversations">
        <div className="sidebar-head">
          <h2>Channels</h2>
          {canWriteChannels ? <button type="button" className="small" onClick={() => void createChannel()}>New channel</button> : null}
        </div>
        <ul className="list" data-testid="channels">
          {channels.map((c) => (
            <li key={c.id} className={c.id === channel?.id ? "selected" : ""}>
              <button type="button" className="item" aria-current={c.id === channel?.id} onClick={() => setChannel(c)}>
                {c.name} <span className="muted">· {c.bot_id}</span>
              </button>
              {canWriteChannels ?
                (
                  <span className="actions">
                    <button type="button" className="icon" aria-label={`Rename ${c.name}`} onClick={() => void renameChannel(c)}>✎</button>
                    <button type="button" className="icon" aria-label={`Delete ${c.name}`} onClick={() => void deleteChannel(c)}>✕</button>
                  </span>
                ) :
                null}
            </li>
          ))}
          {channels.length === 0 ? <li className="muted">No channels yet.</li> : null}
        </ul>
        {channel ?
          (
            <>
              <div className="sidebar-head">
                <h2>Conversations</h2>
                {auth.can("chat") ? <button type="button" className="small" onClick={newSession}>New conversation</button> : null}
              </div>
              <ul className="list" data-testid="sessions">
                {sessions.map((s) => (
                  <li key={s.id} className={s.id === sessionId ? "selected" : ""}>
                    <a
                      className="item"
                      href={`/chat/${s.id}`}
                      aria-current={s.id === sessionId ? "page" : undefined}
                      onClick={(event) => {
                        event.preventDefault()
                        setMenuOpen(false)
                        navigate(`/chat/${s.id}`)
                      }}
                    >
                      {s.title ?? "Untitled"}
                    </a>
                    {canWriteSessions ?
                      (
                        <span className="actions">
                          <button
                            type="button"
                            className="icon"
                            aria-label={`Rename ${s.title ?? "Untitled"}`}
                            onClick={() => void renameSession(s)}
                          >
                            ✎
                          </button>
                          <button
                            type="button"
                            className="icon"
                            aria-label={`Delete ${s.title ?? "Untitled"}`}
                            onClick={() => void deleteSession(s)}
                          >
                            ✕
                          </button>
                        </span>
                      ) :
                      null}
                  </li>
                ))}
                {sessions.length === 0 ? <li className="muted">No conversations yet.</li> : null}
              </ul>
            </>
          ) :
          null}
      </nav>
      <main className="main">
        {error ? <p role="alert" className="error">{error}</p> : null}
        {current ?
          <Conversation key={current.id} auth={auth} session={current} onActivity={() => void loadSessions()} /> :
          (
            <div className="empty">
              <p>{channels.length ? "Pick a channel and a conversation, or start a new one." : "Create a channel to start chatting."}</p>
            </div>
          )}
      </main>
    </div>
  )
}
