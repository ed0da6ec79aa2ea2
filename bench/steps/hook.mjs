/**
 * Preloaded into a Cairn server by `bench/steps.ts` (`node --import`): counts every step of
 * Effect's run loop, by the code that made the effect it runs (its site: the first frame outside
 * Effect when it was made, and the first of Cairn's own; an effect Effect makes inside a
 * continuation takes the site of the code that pushed that continuation). SIGUSR2 writes the
 * tally so far to `STEPS_OUT.<n>` and starts a new one.
 */
import fs from "node:fs"
import { findSourceMap, register } from "node:module"

register("./loader.mjs", import.meta.url)

const tally = new Map()
let total = 0
let dumps = 0
const callsites = (_, sites) => sites
const relative = (file) => file.replace(/^file:\/\//, "").replace(/.*\/(node_modules|src|integrations|bin)\//, "$1/")
const isCairns = (file) => !file.includes("/node_modules/") && /\/(src|integrations)\//.test(file)

/** `file:line`; for Cairn's TypeScript (`own`), the line of the source, through the map tsx compiled it with. */
const lineOf = (file, site, own) => {
  const entry = own ? findSourceMap(file)?.findEntry(site.getLineNumber() - 1, site.getColumnNumber() - 1) : undefined
  return entry?.originalLine === undefined ? `${relative(file)}:${site.getLineNumber()}` : `${relative(file)}:${entry.originalLine + 1}`
}

globalThis.__effectSite = () => {
  const saved = Error.prepareStackTrace
  const limit = Error.stackTraceLimit
  Error.prepareStackTrace = callsites
  Error.stackTraceLimit = 30
  const holder = {}
  Error.captureStackTrace(holder, globalThis.__effectSite)
  const sites = holder.stack
  Error.prepareStackTrace = saved
  Error.stackTraceLimit = limit
  let outside
  for (const site of sites) {
    const file = site.getFileName() ?? ""
    if (file.includes("/node_modules/effect/") || file.startsWith("node:")) continue
    const own = isCairns(file)
    const at = lineOf(file, site, own)
    if (own) return outside === undefined ? at : `${outside} < ${at}`
    outside ??= at
  }
  return outside ?? globalThis.__effectSiteNow
}

globalThis.__effectStep = (effect) => {
  total++
  if (effect?.__site !== undefined) globalThis.__effectSiteNow = effect.__site
  const key = `${effect?._op ?? "?"}\t${effect?.__site ?? ""}`
  tally.set(key, (tally.get(key) ?? 0) + 1)
}

process.on("SIGUSR2", () => {
  const rows = [...tally.entries()].sort((a, b) => b[1] - a[1]).map(([key, count]) => `${count}\t${key}`)
  fs.writeFileSync(`${process.env.STEPS_OUT}.${dumps++}`, [`total\t${total}`, ...rows].join("\n"))
  tally.clear()
  total = 0
})
