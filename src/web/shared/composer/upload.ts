/** Image attachments: uploaded through the typed client as they are added, sent by id. */
import { Effect } from "effect"
import type { CairnClient } from "../../../client.ts"
import { ImageMimeType } from "../../../sessions/Attachments.ts"
import { runCall } from "../calls.ts"

/** The image types a model takes (the server sniffs the bytes again; this only filters the picker). */
export const imageTypes: ReadonlyArray<string> = ImageMimeType.literals

export const isImage = (file: File) => imageTypes.includes(file.type)

/** Uploads one file; answers its attachment id. */
export const uploadImage = (client: CairnClient, file: File): Promise<string> => {
  const form = new FormData()
  form.append("file", file, file.name || "image")
  return runCall(Effect.map(client.attachments.upload({ urlParams: {}, payload: form }), (attachment) => attachment.id))
}
