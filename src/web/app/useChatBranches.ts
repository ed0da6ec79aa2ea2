/**
 * A conversation's versions: edit and resend, and regenerate, branch the conversation at a user
 * message (the server copies what came before into a new session, `forked_from`), and the message
 * is sent again on the branch. Every branch stays reachable: a user message where the conversation
 * branched shows `‹ 1/2 ›`, each version one of the sessions that went on from there.
 */
import { useCallback, useEffect, useMemo, useState } from "react"
import type { ComposedMessage } from "../shared/composer/Composer.tsx"
import type { AuthSession } from "../shared/session.ts"
import type { MessageHandlers, StoredMessage } from "./Messages.tsx"
import { navigate } from "./route.ts"

interface Branch {
  readonly id: string
  readonly forked_from: string | null
  readonly fork_point: number | null
}

/** A message's versions: which one this conversation is, of how many, and how to open the others. */
export interface Versions {
  readonly current: number
  readonly total: number
  readonly open: (index: number) => void
}

/** Messages a branch sends once it opens (handed from the conversation that made it). */
const handoff = new Map<string, ComposedMessage>()

/** What the branch `sessionId` was made to send, once. */
export const takeHandoff = (sessionId: string): ComposedMessage | undefined => {
  const message = handoff.get(sessionId)
  handoff.delete(sessionId)
  return message
}

/**
 * For the message at `index` of session `id`, its versions: the session whose message it first was
 * (a branch's own message at its fork point is a version of its source's), then every branch that
 * replaced that message there, oldest first; and which of them this session goes on from.
 */
export const versionsAt = (branches: ReadonlyArray<Branch>, id: string, index: number) => {
  const byId = new Map(branches.map((branch) => [branch.id, branch]))
  const parentOf = (branch: Branch) => (branch.forked_from ? byId.get(branch.forked_from) : undefined)
  /** Up from `from` while the message at `index` is a copy or a replacement of the source's. */
  const anchorOf = (from: Branch | undefined) => {
    let at = from
    while (at && at.fork_point !== null && index <= at.fork_point && parentOf(at)) at = parentOf(at)
    return at
  }
  const anchor = anchorOf(byId.get(id))
  if (!anchor) return undefined
  const group = [anchor, ...branches.filter((branch) => branch.fork_point === index && anchorOf(branch) === anchor)]
  const members = new Set(group.map((member) => member.id))
  let current = 0
  for (let at = byId.get(id); at; at = parentOf(at)) {
    if (members.has(at.id)) {
      current = group.findIndex((member) => member.id === at.id)
      break
    }
  }
  return { group: group.map((member) => member.id), current }
}

export const useChatBranches = (
  auth: AuthSession,
  sessionId: string,
  messages: ReadonlyArray<StoredMessage> | undefined,
  onError: (problem: unknown) => void,
  /** An answer is being written: no edit or regenerate meanwhile. */
  running: boolean
): MessageHandlers => {
  const [branches, setBranches] = useState<ReadonlyArray<Branch>>([])
  const stored = messages !== undefined && messages.length > 0
  useEffect(() => {
    if (!stored || !auth.can("sessions:read")) return
    let gone = false
    auth.call((client) => client.sessions.family({ path: { id: sessionId } })).then(
      (family) => !gone && setBranches(family.branches),
      () => !gone && setBranches([])
    )
    return () => {
      gone = true
    }
  }, [auth, sessionId, stored])

  /** The versions of the user message `message`, when the conversation branched there. */
  const versionsOf = useCallback((message: StoredMessage): Versions | undefined => {
    const index = messages?.indexOf(message) ?? -1
    if (index < 0 || branches.length < 2) return undefined
    const found = versionsAt(branches, sessionId, index)
    if (!found || found.group.length < 2) return undefined
    return {
      current: found.current,
      total: found.group.length,
      open: (to: number) => navigate(`/chat/${found.group[to]}`)
    }
  }, [branches, messages, sessionId])

  /** A branch at `message` (a user message) that sends `resent` instead: opened at once, sent as it opens. */
  const branchAt = useCallback(async (message: StoredMessage, resent: ComposedMessage) => {
    try {
      const branch = await auth.call((client) => client.sessions.fork({ path: { id: sessionId }, payload: { message_id: message.id } }))
      handoff.set(branch.id, resent)
      navigate(`/chat/${branch.id}`)
    } catch (problem) {
      onError(problem)
    }
  }, [auth, onError, sessionId])

  const editable = auth.can("chat") && auth.can("sessions:write") && !running
  // Kept while nothing it uses changes: the list is not drawn again for each token of an answer.
  return useMemo<MessageHandlers>(() => ({
    versionsOf,
    ...(editable ?
      {
        // The message's images go again with it: the server takes them from the stored message (`resend_of`).
        onEdit: (message, text) => void branchAt(message, { text, attachments: [], model: undefined, resendOf: message.id }),
        onRegenerate: (message) =>
          void branchAt(message, { text: message.content, attachments: [], model: undefined, resendOf: message.id })
      } :
      {})
  }), [branchAt, editable, versionsOf])
}
