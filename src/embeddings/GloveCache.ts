/**
 * The offline embedder's word vectors as a compact table (`bin/glove-cache.mjs` makes it from the
 * packaged 307 MB JSON: 8-bit rows, SIF weights, the shared direction; ~38 MB). Reading it takes a
 * file read and one pass over the word list; the JSON parse it replaces blocked the event loop for
 * seconds and took ~1 GB. A missing table is built in a worker thread (the build makes it at
 * `npm install`, so that is a first start after a package update, or a cache that was removed).
 */
import * as fs from "node:fs/promises"
import { pathToFileURL } from "node:url"
import { Worker } from "node:worker_threads"
import { projectDir } from "../config/ProjectRoot.ts"

export interface WordVectors {
  readonly dimension: number
  readonly index: ReadonlyMap<string, number>
  /**
   * Unit-length vectors, row by row, in frequency order, quantised to 8 bits per component: a
   * component is `table × step` of its row; the rounding moves a text's cosine similarities by
   * about 0.001.
   */
  readonly table: Int8Array
  /** Per-row SIF weight times the row's quantisation step (so a row's contribution is one multiply). */
  readonly weights: Float32Array
  /** Unit direction shared by all texts (mean of the frequent words), projected out of each. */
  readonly common: ReadonlyArray<number>
}

/** What `bin/glove-cache.mjs` exports (plain JavaScript, so a worker runs it under any loader). */
interface Builder {
  readonly MAGIC: string
  readonly gloveSource: () => string
  readonly gloveCacheTarget: () => string
}

const builderFile = projectDir("bin/glove-cache.mjs")

const exists = (file: string) => fs.access(file).then(() => true, () => false)

/** Builds the table in a worker thread: the server's own thread never holds the JSON. */
const buildInWorker = (source: string, target: string) =>
  new Promise<void>((resolve, reject) => {
    const worker = new Worker(builderFile, { workerData: { gloveCache: { source, target } } })
    worker.once("message", () => resolve())
    worker.once("error", reject)
    worker.once("exit", (code) => (code === 0 ? resolve() : reject(new Error(`The word-vector table's builder exited with ${code}`))))
  })

/** Words indexed per slice of the event loop: a Map of all 341k at once stalled it ~200 ms. */
const wordsPerSlice = 20_000
const nextSlice = () => new Promise<void>((resolve) => setImmediate(resolve))

/** The word list (one per line) as a Map to its row, built a slice at a time so other requests go on meanwhile. */
const indexWords = async (text: string): Promise<{ readonly index: Map<string, number>; readonly rows: number }> => {
  const index = new Map<string, number>()
  let start = 0
  let row = 0
  for (;; row++) {
    const end = text.indexOf("\n", start)
    index.set(text.slice(start, end < 0 ? text.length : end), row)
    if (end < 0) break
    start = end + 1
    if (row % wordsPerSlice === wordsPerSlice - 1) await nextSlice()
  }
  return { index, rows: row + 1 }
}

/** The table from its file's bytes. */
export const parseTable = async (bytes: Buffer, magic: string): Promise<WordVectors> => {
  if (bytes.toString("utf8", 0, magic.length) !== magic) throw new Error("Not a word-vector table of this format")
  let at = Buffer.byteLength(magic)
  const headerLength = bytes.readUInt32LE(at)
  const header = JSON.parse(bytes.toString("utf8", at + 4, at + 4 + headerLength)) as {
    readonly dimension: number
    readonly rows: number
    readonly common: ReadonlyArray<number>
  }
  at += 4 + headerLength
  const wordsLength = bytes.readUInt32LE(at)
  const words = bytes.toString("utf8", at + 4, at + 4 + wordsLength)
  at += 4 + wordsLength
  at += (4 - (at % 4)) % 4
  if (bytes.length !== at + header.rows * 4 + header.rows * header.dimension) throw new Error("The word-vector table is truncated")
  const { index, rows } = await indexWords(words)
  if (rows !== header.rows) throw new Error("The word-vector table's word list does not match its rows")
  // Views over the file's bytes: no copy (the buffer of a large read is its own, offset 0).
  const weights = new Float32Array(bytes.buffer, bytes.byteOffset + at, header.rows)
  const table = new Int8Array(bytes.buffer, bytes.byteOffset + at + header.rows * 4, header.rows * header.dimension)
  return { dimension: header.dimension, index, table, weights, common: header.common }
}

/** The table, built first when it is missing (or unreadable: then built again once). */
export const loadWordVectors = async (): Promise<WordVectors> => {
  const builder = (await import(pathToFileURL(builderFile).href)) as Builder
  const target = builder.gloveCacheTarget()
  if (!(await exists(target))) await buildInWorker(builder.gloveSource(), target)
  try {
    return await parseTable(await fs.readFile(target), builder.MAGIC)
  } catch {
    await buildInWorker(builder.gloveSource(), target)
    return await parseTable(await fs.readFile(target), builder.MAGIC)
  }
}
