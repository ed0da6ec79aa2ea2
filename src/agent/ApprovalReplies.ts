/**
 * An approval answered in the chat it was announced in (tasks/ApprovalNotice.ts): the account
 * owner replies `approve` or `deny` (`yes`, `no`), optionally with the approval's short code (its
 * id's first characters, as the notice shows it). Only a whole short reply counts, so a sentence
 * that happens to start with "no" is a message, not a decision. Without a code the answer is for
 * every call waiting in that conversation (the notices of all of them were posted there).
 */

export interface ApprovalReply {
  readonly approved: boolean
  /** The code named, lowercased; undefined: every pending approval of the session. */
  readonly code: string | undefined
}

const replyShape = /^\s*(approve|approved|yes|y|ok|deny|denied|reject|no|n)(?:\s+([0-9a-f]{4,36}))?\s*[.!]?\s*$/i

const approving = new Set(["approve", "approved", "yes", "y", "ok"])

/** The reply's decision, when the text is one; undefined for any other message. */
export const parseApprovalReply = (text: string): ApprovalReply | undefined => {
  const match = replyShape.exec(text)
  if (!match) return undefined
  return { approved: approving.has(match[1]!.toLowerCase()), code: match[2]?.toLowerCase() }
}
