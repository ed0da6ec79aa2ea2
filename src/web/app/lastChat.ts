/**
 * Where the user left the chat, per user in this browser: the channel open last and, per channel,
 * the conversation open last, so a return (or a reload) lands where they were.
 */
interface LastChat {
  readonly channel?: string
  readonly sessions: Readonly<Record<string, string>>
}

const keyOf = (userId: string) => `cairn:chat:${userId}`

export const recallChat = (userId: string): LastChat => {
  try {
    const stored = JSON.parse(window.localStorage.getItem(keyOf(userId)) ?? "{}") as Partial<LastChat>
    return {
      ...(typeof stored.channel === "string" ? { channel: stored.channel } : {}),
      sessions: typeof stored.sessions === "object" && stored.sessions !== null ? stored.sessions : {}
    }
  } catch {
    return { sessions: {} }
  }
}

/** The channel open now, and its conversation (none: the channel's last one is kept). */
export const rememberChat = (userId: string, channelId: string, sessionId?: string) => {
  const last = recallChat(userId)
  const sessions = sessionId ? { ...last.sessions, [channelId]: sessionId } : last.sessions
  try {
    window.localStorage.setItem(keyOf(userId), JSON.stringify({ channel: channelId, sessions }))
  } catch {
    // Storage full or refused (a private window): the chat works, it only forgets.
  }
}

/** A conversation deleted: no return to it. */
export const forgetConversation = (userId: string, sessionId: string) => {
  const last = recallChat(userId)
  const sessions = Object.fromEntries(Object.entries(last.sessions).filter(([, id]) => id !== sessionId))
  try {
    window.localStorage.setItem(keyOf(userId), JSON.stringify({ ...last, sessions }))
  } catch {
    // As above.
  }
}
