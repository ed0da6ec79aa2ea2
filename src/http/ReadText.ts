/**
 * A whole Node stream (a request or response body) as UTF-8 text, with plain callbacks: the
 * servers and clients that need it sit below Effect's own body readers, on hot paths.
 */
import type { Readable } from "node:stream"

export const readText = (stream: Readable, done: (text: string) => void, broken: (error: Error) => void) => {
  const chunks: Array<Buffer> = []
  stream.on("data", (chunk: Buffer) => chunks.push(chunk))
  stream.on("end", () => done(chunks.length === 1 ? chunks[0]!.toString("utf8") : Buffer.concat(chunks).toString("utf8")))
  stream.on("error", broken)
}
