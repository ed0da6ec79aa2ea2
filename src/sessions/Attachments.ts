/**
 * Image attachments of a chat message (the spec's `attachments`, vision): the shape a client sends,
 * stored with the message and sent to the model as image content parts. Part of the contract.
 */
import { Schema } from "effect"
import { base64Pattern } from "../contract/Base64.ts"

/** The image types vision models take (OpenAI's, Anthropic's and Gemini's common set). */
export const ImageMimeType = Schema.Literal("image/png", "image/jpeg", "image/gif", "image/webp")
export type ImageMimeType = typeof ImageMimeType.Type

const startsWith = (bytes: Uint8Array, ...prefix: ReadonlyArray<number>) => prefix.every((byte, i) => bytes[i] === byte)
export const asciiAt = (bytes: Uint8Array, offset: number, text: string) =>
  bytes.length >= offset + text.length && [...text].every((char, i) => bytes[offset + i] === char.charCodeAt(0))

/** Each image type's byte signature: an image is known by its bytes, never by its name. */
export const imageSignatures: ReadonlyArray<readonly [ImageMimeType, (bytes: Uint8Array) => boolean]> = [
  ["image/png", (b) => startsWith(b, 0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a)],
  ["image/jpeg", (b) => startsWith(b, 0xff, 0xd8, 0xff)],
  ["image/gif", (b) => asciiAt(b, 0, "GIF87a") || asciiAt(b, 0, "GIF89a")],
  ["image/webp", (b) => asciiAt(b, 0, "RIFF") && asciiAt(b, 8, "WEBP")]
]

/** The image type the bytes are, or undefined when they are no image a model takes. */
export const sniffImage = (bytes: Uint8Array): ImageMimeType | undefined => imageSignatures.find(([, matches]) => matches(bytes))?.[0]

export const Base64 = Schema.String.pipe(
  Schema.filter((text) =>
    (text.length > 0 && base64Pattern.test(text)) ||
    "Expected standard base64 (no `data:` prefix, no line breaks)"
  )
)

const ImageUrl = Schema.String.pipe(
  Schema.filter((text) => /^https?:\/\/[^\s]+$/.test(text) || "Expected an http(s) URL")
)

const FileName = Schema.String.pipe(Schema.minLength(1), Schema.maxLength(255))

/** One image as it is kept and served. */
const StoredImage = Schema.Struct({
  type: Schema.Literal("image"),
  mime_type: ImageMimeType,
  name: FileName,
  data: Schema.optionalWith(Base64, { exact: true }),
  url: Schema.optionalWith(ImageUrl, { exact: true })
})

/**
 * One image as clients send it: `data` (base64 of the file) or `url` (fetched by the model's
 * provider), never both; `name`. Companion clients send `filename` for the name and the original
 * server took `content` for the data: both are read as those. `type` defaults to "image", the only
 * kind there is.
 */
const SentImage = Schema.Struct({
  type: Schema.optionalWith(Schema.Literal("image"), { default: () => "image" as const }),
  mime_type: ImageMimeType,
  name: Schema.optionalWith(FileName, { exact: true }),
  filename: Schema.optionalWith(FileName, { exact: true }),
  data: Schema.optionalWith(Base64, { exact: true }),
  content: Schema.optionalWith(Base64, { exact: true }),
  url: Schema.optionalWith(ImageUrl, { exact: true })
}).pipe(
  Schema.filter((image) => {
    if (image.name === undefined && image.filename === undefined) return "Give the image's file name as `name` (or `filename`)"
    const bytes = image.data ?? image.content
    return (bytes === undefined) !== (image.url === undefined) || "Give the image as exactly one of `data` (base64) and `url`"
  })
)

export const ImageAttachment = Schema.transform(SentImage, StoredImage, {
  strict: true,
  decode: ({ content, data, filename, name, ...image }) => {
    const bytes = data ?? content
    return { ...image, name: (name ?? filename)!, ...(bytes !== undefined ? { data: bytes } : {}) }
  },
  encode: (image) => image
})
export type ImageAttachment = typeof ImageAttachment.Type

/** A file uploaded with `POST /api/v1/attachments/upload`, by id: an image goes to the model, a text file into the message. */
export const AttachmentReference = Schema.Struct({ attachment_id: Schema.UUID })
export type AttachmentReference = typeof AttachmentReference.Type

/** What a chat message's `attachments` holds: images given whole, or references to uploads. */
export const MessageAttachment = Schema.Union(ImageAttachment, AttachmentReference)
export type MessageAttachment = typeof MessageAttachment.Type

export const isReference = (attachment: MessageAttachment): attachment is AttachmentReference => "attachment_id" in attachment

/** The size of the file a base64 text holds. */
export const decodedBytes = (base64: string): number => (base64.length / 4) * 3 - (base64.endsWith("==") ? 2 : base64.endsWith("=") ? 1 : 0)

/**
 * The voice a chat message was spoken as (kept with its transcript, within AUDIO_ATTACHMENT_MAX_BYTES).
 * `for_model`: the bot takes audio natively, so the model hears it in that turn.
 */
export interface AudioAttachment {
  readonly type: "audio"
  readonly mime_type: string
  readonly name: string
  readonly data: string
  readonly for_model?: boolean
}

/** A stored attachment the model hears: its base64 and format, or null. */
export const modelAudioOf = (attachment: unknown): { readonly data: string; readonly format: string } | null => {
  if (typeof attachment !== "object" || attachment === null) return null
  const audio = attachment as Partial<Record<keyof AudioAttachment, unknown>>
  if (audio.type !== "audio" || audio.for_model !== true || typeof audio.data !== "string" || typeof audio.name !== "string") return null
  return { data: audio.data, format: audio.name.split(".").at(-1) ?? "wav" }
}

/** A stored attachment as the model receives it (a data URL or the image's URL); null for anything not an image. */
export const imageUrlOf = (attachment: unknown): string | null => {
  if (typeof attachment !== "object" || attachment === null) return null
  const image = attachment as Partial<Record<"type" | "mime_type" | "data" | "url", unknown>>
  if (image.type !== "image") return null
  if (typeof image.data === "string" && typeof image.mime_type === "string") return `data:${image.mime_type};base64,${image.data}`
  return typeof image.url === "string" ? image.url : null
}
