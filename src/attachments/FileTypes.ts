/**
 * What an uploaded file is, read from its bytes: an image, a PDF, an audio file or UTF-8 text. The
 * name and the declared type are never trusted for that; the name only refines text (`.md` is
 * markdown, `.csv` CSV, `.json` JSON when it parses). Anything else is not recognised.
 */
import { asciiAt, ImageMimeType, imageSignatures } from "../sessions/Attachments.ts"
import { audioFormats } from "../speech/Audio.ts"

export const imageTypes: ReadonlyArray<string> = ImageMimeType.literals

/** Byte signatures, most specific first (audio's MPEG frame check is loose, so it comes last). */
const signatures: ReadonlyArray<readonly [string, (bytes: Uint8Array) => boolean]> = [
  ...imageSignatures,
  ["application/pdf", (b) => asciiAt(b, 0, "%PDF-")],
  ...audioFormats.map((format) => [format.mimeType, format.looksLike] as const)
]

const utf8 = new TextDecoder("utf-8", { fatal: true })

/** Text: valid UTF-8 without NUL or other control bytes but tab, newline, carriage return and form feed. */
const textOf = (bytes: Uint8Array): string | null => {
  for (const byte of bytes) if (byte < 0x20 && byte !== 0x09 && byte !== 0x0a && byte !== 0x0d && byte !== 0x0c) return null
  try {
    return utf8.decode(bytes)
  } catch {
    return null
  }
}

const textType = (text: string, name: string): string => {
  const extension = name.toLowerCase().split(".").at(-1)
  if (extension === "md" || extension === "markdown") return "text/markdown"
  if (extension === "csv") return "text/csv"
  if (extension === "json") {
    try {
      JSON.parse(text)
      return "application/json"
    } catch {
      return "text/plain"
    }
  }
  return "text/plain"
}

/** The type the bytes are, or null when they are none Cairn recognises. An empty file is none. */
export const sniffType = (bytes: Uint8Array, name: string): string | null => {
  if (bytes.length === 0) return null
  for (const [type, matches] of signatures) if (matches(bytes)) return type
  const text = textOf(bytes)
  return text === null ? null : textType(text, name)
}

export const isText = (type: string) => type.startsWith("text/") || type === "application/json"

/** Whether `type` is allowed by a list of types and `family/*` patterns; an empty list allows every recognised type. */
export const typeAllowed = (type: string, allowed: ReadonlyArray<string>): boolean =>
  allowed.length === 0 || allowed.some((pattern) => pattern === type || (pattern.endsWith("/*") && type.startsWith(pattern.slice(0, -1))))

/** A file name safe for a `Content-Disposition` header and a listing: no path, no control characters. */
export const safeFileName = (name: string): string => {
  const base = name.split(/[\\/]/).at(-1) ?? ""
  // eslint-disable-next-line no-control-regex -- control characters are what is removed
  const clean = base.replace(/[\u0000-\u001f\u007f"]/g, "").trim().slice(0, 255)
  return clean.length > 0 ? clean : "file"
}
