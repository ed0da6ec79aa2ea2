/**
 * The chat: channels and their sessions in a sidebar (create, rename, delete, as the user's scopes
 * allow) and the open conversation. What is open, and how it is found on landing, is
 * `useChatSelection.ts`; this page acts on it and lays it out.
 *
 * A signed-in user lands in a ready chat: on first sign-in a channel on the default bot is made for
 * them, and on return the channel and conversation they left are opened again (`lastChat.ts`).
 */
import { Either, Schema } from "effect"
import { useCallback, useState } from "react"
import { SessionExport } from "../../sessions/Model.ts"
import { type AuthSession } from "../shared/session.ts"
import { ChatOpenDialog, type OpenDialog } from "./ChatOpenDialog.tsx"
import { type SessionView } from "./ChatSessionItem.tsx"
import { ChatSidebar } from "./ChatSidebar.tsx"
import { Conversation, type SessionRef } from "./Conversation.tsx"
import { ChannelHud } from "./integrations/Hud.tsx"
import { forgetConversation } from "./lastChat.ts"
import { navigate } from "./route.ts"
import { type ChannelView, useChatSelection } from "./useChatSelection.ts"
import { useChatShortcuts } from "./useChatShortcuts.ts"

const readExport = Schema.decodeUnknownEither(Schema.parseJson(SessionExport))

/** The bar above the chat: the sidebar's toggle (on a narrow screen), the open channel, its integrations, the help. */
const ChatHead = ({ auth, channel, menuOpen, setMenuOpen, showShortcuts }: {
  readonly auth: AuthSession
  readonly channel: ChannelView | undefined
  readonly menuOpen: boolean
  readonly setMenuOpen: (open: boolean) => void
  readonly showShortcuts: () => void
}) => (
  <div className="chat-head">
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
    <button type="button" className="icon" aria-label="Keyboard shortcuts" onClick={showShortcuts}>
      ?
    </button>
  </div>
)

/** The open conversation, else why there is none yet. */
const ChatMain = ({ auth, error, current, channels, onActivity }: {
  readonly auth: AuthSession
  readonly error: string | undefined
  readonly current: SessionRef | undefined
  readonly channels: ReadonlyArray<ChannelView> | undefined
  readonly onActivity: () => void
}) => (
  <main className="main" id="chat-main">
    {error ? <p role="alert" className="error">{error}</p> : null}
    {current ?
      (
        <Conversation
          key={current.id}
          auth={auth}
          session={current}
          onActivity={onActivity}
        />
      ) :
      (
        <div className="empty">
          <p>
            {channels === undefined || channels.length > 0 ?
              "Loading…" :
              auth.can("channels:write") ?
              "Create a channel to start chatting." :
              "No channel is open to your account yet; an administrator can add one."}
          </p>
        </div>
      )}
  </main>
)

export const ChatPage = ({ auth, sessionId }: { readonly auth: AuthSession; readonly sessionId: string | undefined }) => {
  const {
    channels,
    bots,
    channel,
    setChannel,
    sessions,
    current,
    error,
    menuOpen,
    setMenuOpen,
    showArchived,
    setShowArchived,
    allMine,
    setAllMine,
    userId,
    attempt,
    loadChannels,
    loadSessions,
    startDraft,
    openChannel
  } = useChatSelection(auth, sessionId)
  const [dialog, setDialog] = useState<OpenDialog | undefined>()

  const createChannel = async (name: string, botId: string) => {
    // Thrown, not caught: the dialog shows what was refused next to its field.
    const made = await auth.call((client) =>
      client.channels.ensure({ payload: { client_id: `web:${crypto.randomUUID()}`, bot_id: botId, name } })
    )
    setDialog(undefined)
    await loadChannels()
    openChannel(made, false)
  }
  const renameChannel = async (target: ChannelView, name: string) => {
    if (name !== target.name) await auth.call((client) => client.channels.update({ path: { id: target.id }, payload: { name } }))
    setDialog(undefined)
    await loadChannels()
  }
  const deleteChannel = async (target: ChannelView) => {
    setDialog(undefined)
    await attempt(() => auth.call((client) => client.channels.delete({ path: { id: target.id } })))
    if (channel?.id === target.id) {
      setChannel(undefined)
      navigate("/")
    }
    await loadChannels()
  }
  const newSession = useCallback(() => {
    if (channel) startDraft(channel, false)
  }, [channel, startDraft])
  const renameSession = async (target: SessionView, title: string) => {
    await auth.call((client) => client.sessions.legacyUpdate({ path: { id: target.id }, payload: { title } }))
    setDialog(undefined)
    await loadSessions()
  }
  /** Pins or unpins, archives or restores a conversation; the list follows. */
  const changeSession = async (target: SessionView, change: { readonly pinned?: boolean; readonly archived?: boolean }) => {
    await attempt(() => auth.call((client) => client.sessions.update({ path: { id: target.id }, payload: change })))
    await loadSessions()
  }
  const deleteSession = async (target: SessionView) => {
    setDialog(undefined)
    await attempt(() => auth.call((client) => client.sessions.legacyDelete({ path: { id: target.id } })))
    forgetConversation(userId, target.id)
    if (target.id === sessionId && channel) startDraft(channel, true)
    await loadSessions()
  }

  /** A conversation exported as JSON, stored as a new one on the open channel's bot, and opened. */
  const importConversation = async (file: File) => {
    const made = await attempt(async () => {
      if (!channel) return undefined
      // Read as the API reads it: a file that is no export is refused here, in words.
      const read = readExport(await file.text())
      if (Either.isLeft(read)) throw new Error(`${file.name} is not a conversation exported as JSON from Cairn.`)
      const exported = read.right
      return auth.call((client) =>
        client.sessions.import({ payload: { bot_id: channel.bot_id, client_id: channel.client_id, export: exported } })
      )
    })
    if (!made) return
    await loadSessions()
    navigate(`/chat/${made.id}`)
  }

  useChatShortcuts(newSession, setMenuOpen, setDialog)

  const closeDialog = () => setDialog(undefined)

  return (
    <div className={`layout${menuOpen ? " menu-open" : ""}`}>
      <h1 className="visually-hidden">Chat</h1>
      <ChatHead
        auth={auth}
        channel={channel}
        menuOpen={menuOpen}
        setMenuOpen={setMenuOpen}
        showShortcuts={() => setDialog({ kind: "shortcuts" })}
      />
      <ChatSidebar
        auth={auth}
        channels={channels}
        channel={channel}
        sessions={sessions}
        sessionId={sessionId}
        showArchived={showArchived}
        setShowArchived={setShowArchived}
        allMine={allMine}
        setAllMine={setAllMine}
        onImport={auth.can("sessions:write") && channel ? (file) => void importConversation(file) : undefined}
        setMenuOpen={setMenuOpen}
        setDialog={setDialog}
        openChannel={openChannel}
        newSession={newSession}
        changeSession={changeSession}
      />
      <ChatMain
        auth={auth}
        error={error}
        current={current}
        channels={channels}
        onActivity={() => void loadSessions()}
      />
      <ChatOpenDialog
        dialog={dialog}
        bots={bots}
        onClose={closeDialog}
        createChannel={createChannel}
        renameChannel={renameChannel}
        deleteChannel={deleteChannel}
        renameSession={renameSession}
        deleteSession={deleteSession}
      />
    </div>
  )
}
