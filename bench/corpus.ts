/**
 * A synthetic document corpus for the benches: text drawn Zipf-like from the packaged GloVe
 * vocabulary (seeded, so every run holds the same corpus), embedded in process and written with
 * multi-row INSERTs, the fast path to 10k or 100k chunks.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import * as Glove from "../src/embeddings/Glove.ts"
import { toPgArray } from "../src/embeddings/Vector.ts"

export const CHUNKS_PER_DOCUMENT = 10
export const WORDS_PER_CHUNK = 60
export const INTEGRATIONS = 10

// A seeded generator, so every run searches the same corpus with the same queries.
let seed = 12345
export const random = () => {
  seed ^= seed << 13
  seed ^= seed >>> 17
  seed ^= seed << 5
  return (seed >>> 0) / 0xffffffff
}

export const vectors = await Glove.wordVectors()
const vocabulary = [...vectors.index.keys()].slice(0, 30_000).filter((word) => /^[a-z]{3,}$/.test(word))
/** Zipf-like draw: frequent words often, rare words sometimes, as in real text. */
const word = (from = 0) =>
  vocabulary[Math.min(vocabulary.length - 1, from + Math.floor(Math.exp(random() * Math.log(vocabulary.length - from))))]!
export const sentence = (n: number, from = 0) => Array.from({ length: n }, () => word(from)).join(" ")
const quote = (text: string) => `'${text.replace(/'/g, "''")}'`

/** Adds synthetic documents until the store holds `target` chunks (it holds `from`). */
export const fill = (from: number, target: number) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const documentsPerBatch = 100
    for (let chunk = from; chunk < target; chunk += documentsPerBatch * CHUNKS_PER_DOCUMENT) {
      const docs: Array<string> = []
      const chunks: Array<string> = []
      for (let d = 0; d < documentsPerBatch && chunk + d * CHUNKS_PER_DOCUMENT < target; d++) {
        const id = crypto.randomUUID()
        const integration = `int-${Math.floor(random() * INTEGRATIONS)}`
        const title = sentence(4, 500)
        const pieces = Array.from({ length: CHUNKS_PER_DOCUMENT }, () => sentence(WORDS_PER_CHUNK))
        docs.push(`(${quote(id)}, ${quote(integration)}, ${quote(title)}, ${quote(pieces.join(" "))})`)
        pieces.forEach((piece, ordinal) => {
          const embedding = Glove.embedText(vectors, `${title}\n${piece}`)
          chunks.push(
            `(${quote(id)}, ${ordinal}, ${quote(integration)}, ${quote(piece)}, ` +
              `setweight(to_tsvector('english', ${quote(title)}), 'A') || to_tsvector('english', ${quote(piece)}), ` +
              `${quote(toPgArray(embedding))}::real[], ${quote(Glove.GLOVE_MODEL)}, ${embedding.length})`
          )
        })
      }
      yield* sql.unsafe(`INSERT INTO documents (id, integration_id, title, content) VALUES ${docs.join(",")}`)
      yield* sql.unsafe(
        `INSERT INTO document_chunks (document_id, ordinal, integration_id, content, search, embedding, embedding_model, dimension) VALUES ${
          chunks.join(",")
        }`
      )
    }
  })

export const percentile = (sorted: ReadonlyArray<number>, p: number) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!

/** The median of values in any order (the upper one of an even count, as `percentile` takes it). */
export const median = (values: ReadonlyArray<number>) => percentile([...values].sort((a, b) => a - b), 0.5)
