/** Attachments: images uploaded through the typed client as they are added, sent by id; documents told apart. */
import { Effect } from "effect"
import type { CairnClient } from "../../../client.ts"
import { ImageMimeType } from "../../../sessions/Attachments.ts"
import { runCall } from "../calls.ts"

/** The image types a model takes (the server sniffs the bytes again; this only filters the picker). */
export const imageTypes: ReadonlyArray<string> = ImageMimeType.literals

export const isImage = (file: File) => imageTypes.includes(file.type)

/** What the file picker offers for documents (the server reads the bytes; this only filters). */
export const documentAccept = ".pdf,.txt,.md,.markdown,.csv,.json,application/pdf,text/plain,text/markdown,text/csv,application/json"

/** A document a conversation takes: a PDF or a text file (by its type, or its name when the browser gives none). */
export const isDocument = (file: File) =>
  ["application/pdf", "application/json"].includes(file.type) || file.type.startsWith("text/") ||
  (file.type === "" && /\.(pdf|txt|md|markdown|csv|json)$/i.test(file.name))

/** Uploads one file (filed under `sessionId` when given); answers its attachment id. */
export const uploadFile = (client: CairnClient, file: File, name: string, sessionId?: string): Promise<string> => {
  const form = new FormData()
  form.append("file", file, file.name || name)
  return runCall(
    Effect.map(
      client.attachments.upload({ urlParams: sessionId ? { session_id: sessionId } : {}, payload: form }),
      (attachment) => attachment.id
    )
  )
}

export const uploadImage = (client: CairnClient, file: File): Promise<string> => uploadFile(client, file, "image")
