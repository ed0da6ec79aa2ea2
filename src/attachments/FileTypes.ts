/**
 * What an uploaded file is, read from its bytes: an image, a PDF, an audio file or UTF-8 text. The
 * name and the declared type are never trusted for that; the name only refines text (`.md` is
 * markdown, `.csv` CSV, `.json` JSON when it parses). Anything else is not recognised.
 */
import { audioFormats } from "../speech/Audio.ts"

export const imageTypes: ReadonlyArray<string> = ["image/png", "image/jpeg", "image/gif", "image/webp"]

const startsWith = (bytes: Uint8Array, ...prefix: ReadonlyArray<number>) => prefix.every((byte, i) => bytes[i] === byte)
const ascii = (bytes: Uint8Array, offset: number, text: string) =>
  bytes.length >= offset + text.length && [...text].every((char, i) => bytes[offset + i] === char.charCodeAt(0))

/** Byte signatures, most specific first (audio's MPEG frame check is loose, so it comes last). */
const signatures: ReadonlyArray<readonly [string, (bytes: Uint8Array) => boolean]> = [
  ["image/png", (b) => startsWith(b, 0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a)],
  ["image/jpeg", (b) => startsWith(b, 0xff, 0xd8, 0xff)],
  ["image/gif", (b) => ascii(b, 0, "GIF87a") || ascii(b, 0, "GIF89a")],
  ["image/webp", (b) => ascii(b, 0, "RIFF") && ascii(b, 8, "WEBP")],
  ["application/pdf", (b) => ascii(b, 0, "%PDF-")],
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
  const clean = base.replace(/[\u0000-\u001f\u007f"]/g, "").trim().slice(0, 255)
  return clean.length > 0 ? clean : "file"
}
