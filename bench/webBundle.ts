/**
 * The web app's weight on the chat route: the JavaScript and CSS `dist/web/index.html` loads
 * (entry script, module preloads, stylesheet), each gzipped at level 9 as the server serves it, plus
 * the lazily loaded highlight.js core that the first code block fetches. Build first (`npm run build:web`).
 */
import { readFileSync } from "node:fs"
import * as path from "node:path"
import { gzipSync } from "node:zlib"
import { webDistDir } from "../src/http/WebApp.ts"

const html = readFileSync(path.join(webDistDir, "index.html"), "utf8")
const initial = [...html.matchAll(/(?:src|href)="(\/assets\/[^"]+\.(?:js|css))"/g)].map((m) => m[1]!)
const lazyCore = readFileSync(path.join(webDistDir, initial[0]!.slice(1)), "utf8").match(/(core-[\w-]+\.js)/)?.[1]
const sizeOf = (asset: string) => {
  const body = readFileSync(path.join(webDistDir, asset.replace(/^\//, "")))
  return { asset, raw: body.length, gzip: gzipSync(body, { level: 9 }).length }
}
const rows = [...initial.map(sizeOf), ...(lazyCore ? [sizeOf(`assets/${lazyCore}`)] : [])]
const kb = (n: number) => (n / 1024).toFixed(1)
for (const row of rows) console.log(`${row.asset}\t${kb(row.raw)} KB\t${kb(row.gzip)} KB gzip`)
const js = rows.filter((row) => row.asset.endsWith(".js"))
console.log(`chat route JavaScript: ${kb(js.reduce((sum, row) => sum + row.gzip, 0))} KB gzip (target: under 300 KB)`)
