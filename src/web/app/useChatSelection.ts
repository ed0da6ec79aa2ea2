/**
 * What the chat has open: the channels and their sessions, the channel selected in the sidebar and
 * the conversation in the address (a stored session, or a draft started here). A new conversation
 * gets its id here and is created by its first message (the server creates a session id it has not
 * seen). On landing, the channel and conversation the user left are opened again (`lastChat.ts`).
 */
import { useCallback, useEffect, useRef, useState } from "react"
import { describeError } from "../shared/calls.ts"
import { type AuthSession } from "../shared/session.ts"
import { type SessionView } from "./ChatSessionItem.tsx"
import { type SessionRef } from "./Conversation.tsx"
import { recallChat, rememberChat } from "./lastChat.ts"
import { navigate } from "./route.ts"

export interface ChannelView {
  readonly id: string
  readonly name: string
  readonly bot_id: string
  readonly client_id: string
}

/** Conversations started here but not yet sent: their id is ours until the first message. */
const drafts = new Map<string, SessionRef>()

/** The user's own chat channel, made on their first visit: one per user, so making it twice finds it. */
const defaultChannel = (userId: string) => ({ client_id: `web:${userId}`, bot_id: "default", name: "Chat" })

export const useChatSelection = (auth: AuthSession, sessionId: string | undefined) => {
  const [channels, setChannels] = useState<ReadonlyArray<ChannelView> | undefined>()
  const [bots, setBots] = useState<ReadonlyArray<{ id: string; name: string }>>([])
  const [channel, setChannel] = useState<ChannelView | undefined>()
  const [sessions, setSessions] = useState<ReadonlyArray<SessionView>>([])
  const [current, setCurrent] = useState<SessionRef | undefined>()
  /** The conversation in the address that the server does not know: a draft from before a reload. */
  const [missing, setMissing] = useState<string | undefined>()
  const [error, setError] = useState<string | undefined>()
  const [menuOpen, setMenuOpen] = useState(false)
  /** The sidebar lists the channel's archived conversations instead of the others. */
  const [showArchived, setShowArchived] = useState(false)
  /** The sidebar lists every conversation of the user's, whatever channel or surface (the CLI) made it. */
  const [allMine, setAllMine] = useState(false)
  const userId = auth.user?.id ?? ""

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

  const listChannels = useCallback(
    () => auth.call((client) => client.channels.list({ urlParams: { limit: 500, offset: 0 } })).then((list) => list.channels),
    [auth]
  )
  const loadChannels = useCallback(async () => {
    if (!auth.can("channels:read")) return setChannels([])
    const list = await attempt(async () => {
      const found = await listChannels()
      // First visit: a channel on the default bot, so the first message can be typed at once.
      if (found.length > 0 || !auth.can("channels:write") || !userId) return found
      await auth.call((client) => client.channels.ensure({ payload: defaultChannel(userId) }))
      return listChannels()
    })
    setChannels(list ?? [])
  }, [attempt, auth, listChannels, userId])

  const loadSessions = useCallback(async () => {
    if (!channel || !auth.can("sessions:read")) return setSessions([])
    const list = await attempt(() =>
      auth.call((client) =>
        client.sessions.legacyList({
          urlParams: allMine ?
            { mine: true, limit: 200, archived: showArchived } :
            { bot_id: channel.bot_id, client_id: channel.client_id, limit: 100, archived: showArchived }
        })
      )
    )
    if (list) setSessions(list)
  }, [allMine, auth, attempt, channel, showArchived])

  useEffect(() => {
    void loadChannels()
    if (auth.can("bots:read")) void attempt(() => auth.call((client) => client.bots.legacyList())).then((list) => list && setBots(list))
  }, [auth, attempt, loadChannels])
  useEffect(() => void loadSessions(), [loadSessions])

  /** A fresh conversation in `target`, its id in the address (`replace`: a landing, not a step back). */
  const startDraft = useCallback((target: ChannelView, replace: boolean) => {
    const id = crypto.randomUUID()
    drafts.set(id, { id, bot_id: target.bot_id, client_id: target.client_id })
    setMenuOpen(false)
    navigate(`/chat/${id}`, { replace })
  }, [])

  /** Opens a channel where the user left it: its last conversation, else a new one. */
  const openChannel = useCallback((target: ChannelView, replace: boolean) => {
    setChannel(target)
    rememberChat(userId, target.id)
    const last = recallChat(userId).sessions[target.id]
    if (last) {
      setMenuOpen(false)
      navigate(`/chat/${last}`, { replace })
    } else startDraft(target, replace)
  }, [startDraft, userId])

  // Landing on the chat with no conversation in the address: the channel left last, else the first.
  useEffect(() => {
    if (sessionId || !channels || channels.length === 0) return
    const remembered = recallChat(userId).channel
    openChannel(channels.find((c) => c.id === remembered) ?? channels[0]!, true)
  }, [channels, openChannel, sessionId, userId])

  // The open conversation: a stored session, or a draft started here.
  useEffect(() => {
    setMissing(undefined)
    if (!sessionId) return setCurrent(undefined)
    const draft = drafts.get(sessionId)
    if (draft) return setCurrent(draft)
    let gone = false
    auth.call((client) => client.sessions.legacyGet({ path: { id: sessionId } })).then(
      (found) => !gone && setCurrent({ id: found.id, bot_id: found.bot_id, client_id: found.client_id }),
      (failure: unknown) => {
        if (gone) return
        const tag = (failure as { _tag?: string })._tag
        if (tag === "NotFound" || tag === "SessionNotFound") setMissing(sessionId)
        else setError(describeError(failure))
      }
    )
    return () => {
      gone = true
    }
  }, [auth, sessionId])
  // A draft from before a reload (never sent): it goes on as a draft in the channel left last.
  useEffect(() => {
    if (!missing || missing !== sessionId || !channels) return
    const remembered = recallChat(userId).channel
    const home = channels.find((c) => c.id === remembered) ?? channels[0]
    if (!home) return
    drafts.set(missing, { id: missing, bot_id: home.bot_id, client_id: home.client_id })
    setMissing(undefined)
    setCurrent(drafts.get(missing))
  }, [channels, missing, sessionId, userId])

  // Opening a conversation selects its channel in the sidebar (once: the user may pick another).
  const synced = useRef<string | undefined>(undefined)
  useEffect(() => {
    if (!current || synced.current === current.id || !channels) return
    const match = channels.find((c) => c.bot_id === current.bot_id && c.client_id === current.client_id)
    if (!match) return
    synced.current = current.id
    setChannel(match)
    rememberChat(userId, match.id, current.id)
  }, [channels, current, userId])

  return {
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
  }
}
