/**
 * Splits long content into overlapping chunks. Each chunk is embedded and indexed on its own, so
 * a passage deep inside a long document is still found; the overlap keeps a sentence that straddles
 * a boundary whole in at least one chunk.
 */

export interface ChunkOptions {
  /** Target chunk length in characters (about 250 English words at the default). */
  readonly size: number
  /** Characters repeated from the end of one chunk at the start of the next. */
  readonly overlap: number
}

export const defaultChunkOptions: ChunkOptions = { size: 1200, overlap: 200 }

/** Where to cut before `end`: a paragraph, then a sentence end, then whitespace, searched back to `floor`. */
const cutPoint = (text: string, floor: number, end: number): number => {
  const window = text.slice(floor, end)
  for (const pattern of [/\n\s*\n/g, /[.!?]["')\]]?\s/g, /\s/g]) {
    let last = -1
    for (const match of window.matchAll(pattern)) last = match.index + match[0].length
    if (last > 0) return floor + last
  }
  return end
}

/** Where to start after `start`: the next whitespace, so a chunk never begins mid-word. */
const startPoint = (text: string, start: number, limit: number): number => {
  const match = /\s/.exec(text.slice(start, limit))
  return match ? start + match.index + 1 : start
}

export const chunkText = (content: string, options: ChunkOptions = defaultChunkOptions): Array<string> => {
  const text = content.trim()
  if (text.length <= options.size) return text.length === 0 ? [] : [text]
  const chunks: Array<string> = []
  let start = 0
  while (start < text.length) {
    let end = Math.min(start + options.size, text.length)
    if (end < text.length) end = cutPoint(text, start + Math.floor(options.size * 0.6), end)
    const chunk = text.slice(start, end).trim()
    if (chunk.length > 0) chunks.push(chunk)
    if (end >= text.length) break
    // Step back by the overlap, but always forward overall so the loop ends.
    const back = Math.max(end - options.overlap, start + 1)
    start = startPoint(text, back, end)
  }
  return chunks
}
