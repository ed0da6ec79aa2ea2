/**
 * Documents in the chat: a PDF, text or Markdown file dropped or picked in the composer is uploaded
 * (the attachments API: its size and type limits) and made a document of this conversation
 * (`POST /api/v1/sessions/{id}/documents`), which the bot's answers here then draw on. Each shows as
 * a chip with its state (uploading, reading, ready, failed with the server's words) and can be
 * removed; the documents the conversation already has are listed when it opens.
 */
import { Effect } from "effect"
import { useCallback, useEffect, useState } from "react"
import { describeError } from "../shared/calls.ts"
import type { AuthSession } from "../shared/session.ts"
import type { SessionRef } from "./Conversation.tsx"

export interface SessionDocumentChip {
  readonly key: string
  readonly name: string
  readonly state: "uploading" | "reading" | "ready" | "failed"
  readonly documentId?: string
  readonly error?: string
}

let nextKey = 0

export const useSessionDocuments = (
  auth: AuthSession,
  session: SessionRef,
  /** A document was added: the list shows a conversation it created. */
  onAdded: () => void
) => {
  const [chips, setChips] = useState<ReadonlyArray<SessionDocumentChip>>([])
  /** What the conversation says of the documents added while it is open. */
  const [added, setAdded] = useState<ReadonlyArray<string>>([])
  const enabled = auth.can("chat") && auth.can("attachments:write")

  useEffect(() => {
    setChips([])
    setAdded([])
    if (!enabled) return
    let gone = false
    auth.call((client) => client.sessionDocuments.list({ path: { id: session.id } })).then(
      (documents) =>
        !gone &&
        setChips(documents.map((document) => ({ key: document.id, name: document.title, state: "ready", documentId: document.id }))),
      // A conversation not started yet has none.
      () => undefined
    )
    return () => {
      gone = true
    }
  }, [auth, enabled, session.id])

  const update = (key: string, change: Partial<SessionDocumentChip>) =>
    setChips((current) => current.map((chip) => (chip.key === key ? { ...chip, ...change } : chip)))

  const add = useCallback((files: ReadonlyArray<File>) => {
    for (const file of files) {
      const key = `new-${nextKey++}`
      const name = file.name || "document"
      setChips((current) => [...current, { key, name, state: "uploading" }])
      void (async () => {
        try {
          const form = new FormData()
          form.append("file", file, name)
          const attachmentId = await auth.call((client) =>
            Effect.map(client.attachments.upload({ urlParams: { session_id: session.id }, payload: form }), (uploaded) => uploaded.id)
          )
          update(key, { state: "reading" })
          const document = await auth.call((client) =>
            client.sessionDocuments.add({
              path: { id: session.id },
              payload: { attachment_id: attachmentId, bot_id: session.bot_id, client_id: session.client_id }
            })
          )
          update(key, { state: "ready", documentId: document.id })
          setAdded((current) => [...current, name])
          onAdded()
        } catch (problem) {
          update(key, { state: "failed", error: describeError(problem) })
        }
      })()
    }
  }, [auth, onAdded, session.bot_id, session.client_id, session.id])

  const remove = useCallback((chip: SessionDocumentChip) => {
    setChips((current) => current.filter((other) => other.key !== chip.key))
    if (chip.documentId === undefined) return
    const documentId = chip.documentId
    auth.call((client) => client.sessionDocuments.remove({ path: { id: session.id, document_id: documentId } })).catch(
      (problem: unknown) => setChips((current) => [...current, { ...chip, state: "failed", error: describeError(problem) }])
    )
  }, [auth, session.id])

  return { enabled, chips, added, add, remove }
}
