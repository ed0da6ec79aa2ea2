/**
 * The text of a file made a document: UTF-8 text (plain, Markdown, CSV, JSON) as it is, a PDF's
 * text layer read with unpdf (PDF.js, no native code). What has no text (an image, audio, a scanned
 * PDF) is refused with a message that says why.
 */
import { Effect } from "effect"
import { isText } from "../attachments/FileTypes.ts"
import { UnsupportedDocument } from "../documents/Errors.ts"

const pdfText = (bytes: Uint8Array) =>
  Effect.tryPromise({
    try: async () => {
      const { extractText, getDocumentProxy } = await import("unpdf")
      // A copy: PDF.js takes the buffer over, and the attachment's bytes may be cached elsewhere.
      const pdf = await getDocumentProxy(new Uint8Array(bytes), { verbosity: 0 })
      const { text, totalPages } = await extractText(pdf, { mergePages: false })
      return { text: text.map((page) => page.trim()).filter(Boolean).join("\n\n"), pages: totalPages }
    },
    catch: (error) => new UnsupportedDocument({ detail: `The PDF could not be read: ${String(error).split("\n", 1)[0]}` })
  })

/** The file's text, and its page count for a PDF. */
export const extractText = (name: string, type: string, bytes: Uint8Array) =>
  Effect.gen(function*() {
    if (type === "application/pdf") {
      const { text, pages } = yield* pdfText(bytes)
      if (!text.trim()) {
        return yield* new UnsupportedDocument({
          detail: `${name} has no text layer (a scanned PDF?): only PDFs with text can be read`
        })
      }
      return { text, pages: pages as number | null }
    }
    if (isText(type)) {
      const text = new TextDecoder("utf-8").decode(bytes)
      if (!text.trim()) return yield* new UnsupportedDocument({ detail: `${name} is empty` })
      return { text, pages: null }
    }
    return yield* new UnsupportedDocument({
      detail: `${name} is ${type}: a conversation's documents are PDFs and text files (plain, Markdown, CSV, JSON)`
    })
  })
