/**
 * Fetches model files into DATA_DIR once: each file is written to a temporary name and renamed
 * when complete, so an interrupted download is never mistaken for a model.
 */
import { Effect } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { Readable } from "node:stream"
import { pipeline } from "node:stream/promises"
import { EmbeddingError } from "./Embedder.ts"

export const downloadOnce = (url: string, target: string) =>
  Effect.gen(function*() {
    if (fs.existsSync(target)) return false
    yield* Effect.logInfo(`Downloading ${url} to ${target} (first start only)`)
    yield* Effect.tryPromise({
      try: async (signal) => {
        fs.mkdirSync(path.dirname(target), { recursive: true })
        const response = await fetch(url, { signal, redirect: "follow" })
        if (!response.ok || !response.body) throw new Error(`HTTP ${response.status}`)
        const partial = `${target}.partial-${process.pid}`
        try {
          await pipeline(Readable.fromWeb(response.body as any), fs.createWriteStream(partial))
          fs.renameSync(partial, target)
        } finally {
          fs.rmSync(partial, { force: true })
        }
      },
      catch: (cause) =>
        new EmbeddingError({ message: `Cannot download ${url}: ${cause instanceof Error ? cause.message : String(cause)}`, cause })
    })
    return true
  })
