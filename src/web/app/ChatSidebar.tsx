/** The chat's sidebar: search, the channels, and the selected channel's conversations (or its archived ones). */
import { type AuthSession } from "../shared/session.ts"
import { type OpenDialog } from "./ChatOpenDialog.tsx"
import { ChatSearch } from "./ChatSearch.tsx"
import { SessionItem, type SessionView } from "./ChatSessionItem.tsx"
import { navigate } from "./route.ts"
import { type ChannelView } from "./useChatSelection.ts"

const ChannelList = ({ channels, channel, canWrite, onOpen, setDialog }: {
  readonly channels: ReadonlyArray<ChannelView> | undefined
  readonly channel: ChannelView | undefined
  readonly canWrite: boolean
  readonly onOpen: (target: ChannelView) => void
  readonly setDialog: (dialog: OpenDialog) => void
}) => (
  <ul className="list" data-testid="channels">
    {(channels ?? []).map((c) => (
      <li key={c.id} className={c.id === channel?.id ? "selected" : ""}>
        <button type="button" className="item" aria-current={c.id === channel?.id} onClick={() => onOpen(c)}>
          {c.name} <span className="muted">· {c.bot_id}</span>
        </button>
        {canWrite ?
          (
            <span className="actions">
              <button
                type="button"
                className="icon"
                aria-label={`Rename ${c.name}`}
                onClick={() => setDialog({ kind: "rename-channel", channel: c })}
              >
                ✎
              </button>
              <button
                type="button"
                className="icon"
                aria-label={`Delete ${c.name}`}
                onClick={() => setDialog({ kind: "delete-channel", channel: c })}
              >
                ✕
              </button>
            </span>
          ) :
          null}
      </li>
    ))}
    {channels?.length === 0 ? <li className="muted">No channels yet.</li> : null}
  </ul>
)

/** Import: a JSON export chosen from the disk becomes a new conversation. */
const ImportButton = ({ onImport }: { readonly onImport: (file: File) => void }) => (
  <label className="small link-button import-button">
    Import conversation
    <input
      type="file"
      accept="application/json,.json"
      className="visually-hidden"
      data-testid="import-conversation"
      onChange={(event) => {
        const file = event.target.files?.[0]
        event.target.value = ""
        if (file) onImport(file)
      }}
    />
  </label>
)

export const ChatSidebar = (
  {
    auth,
    channels,
    channel,
    sessions,
    sessionId,
    showArchived,
    setShowArchived,
    allMine,
    setAllMine,
    onImport,
    setMenuOpen,
    setDialog,
    openChannel,
    newSession,
    changeSession
  }: {
    readonly auth: AuthSession
    readonly channels: ReadonlyArray<ChannelView> | undefined
    readonly channel: ChannelView | undefined
    readonly sessions: ReadonlyArray<SessionView>
    readonly sessionId: string | undefined
    readonly showArchived: boolean
    readonly setShowArchived: (show: boolean) => void
    readonly allMine: boolean
    readonly setAllMine: (all: boolean) => void
    /** Stores a conversation exported as JSON as a new one; undefined when the user may not. */
    readonly onImport: ((file: File) => void) | undefined
    readonly setMenuOpen: (open: boolean) => void
    readonly setDialog: (dialog: OpenDialog) => void
    readonly openChannel: (target: ChannelView, replace: boolean) => void
    readonly newSession: () => void
    readonly changeSession: (target: SessionView, change: { readonly pinned?: boolean; readonly archived?: boolean }) => Promise<void>
  }
) => (
  <nav className="sidebar" aria-label="Channels and conversations">
    {auth.can("sessions:read") ? <ChatSearch auth={auth} onOpen={() => setMenuOpen(false)} /> : null}
    <div className="sidebar-head">
      <h2>Channels</h2>
      {auth.can("channels:write")
        ? <button type="button" className="small" onClick={() => setDialog({ kind: "new-channel" })}>New channel</button>
        : null}
    </div>
    <ChannelList
      channels={channels}
      channel={channel}
      canWrite={auth.can("channels:write")}
      onOpen={(c) => openChannel(c, false)}
      setDialog={setDialog}
    />
    {channel ?
      (
        <>
          <div className="sidebar-head">
            <h2>{`${allMine ? "All my " : ""}${showArchived ? "archived" : "conversations"}`.replace(/^./, (c) => c.toUpperCase())}</h2>
            {auth.can("chat") ? <button type="button" className="small" onClick={newSession}>New conversation</button> : null}
          </div>
          <ul className="list" data-testid="sessions">
            {sessions.map((s) => (
              <SessionItem
                key={s.id}
                session={s}
                current={s.id === sessionId}
                canWrite={auth.can("sessions:write")}
                onOpen={() => {
                  setMenuOpen(false)
                  navigate(`/chat/${s.id}`)
                }}
                onChange={(change) => void changeSession(s, change)}
                onRename={() => setDialog({ kind: "rename-session", session: s })}
                onDelete={() => setDialog({ kind: "delete-session", session: s })}
              />
            ))}
            {sessions.length === 0 ? <li className="muted">{showArchived ? "Nothing archived." : "No conversations yet."}</li> : null}
          </ul>
          <button
            type="button"
            className="small link-button"
            aria-pressed={showArchived}
            onClick={() => setShowArchived(!showArchived)}
          >
            {showArchived ? "Back to conversations" : "Show archived"}
          </button>
          <button type="button" className="small link-button" aria-pressed={allMine} onClick={() => setAllMine(!allMine)}>
            {allMine ? "This channel only" : "All my conversations"}
          </button>
          {onImport ? <ImportButton onImport={onImport} /> : null}
        </>
      ) :
      null}
  </nav>
)
