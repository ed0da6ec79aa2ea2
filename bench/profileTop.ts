/**
 * The top self-time functions of a V8 CPU profile (`node --cpu-prof`, as `bench/turns.ts --profile`
 * writes them), and the share of each package: what bench/README.md lists before and after.
 *
 *   npx tsx bench/profileTop.ts <file.cpuprofile> [--top 25] [--last SECONDS]
 *
 * `--last` keeps only the profile's last seconds (the measured cell, not the start-up). Shares are
 * of the busy time (idle excluded).
 */
import * as fs from "node:fs"

interface ProfileNode {
  readonly id: number
  readonly children?: ReadonlyArray<number>
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number }
}
interface Profile {
  readonly nodes: ReadonlyArray<ProfileNode>
  readonly startTime: number
  readonly endTime: number
  readonly samples: ReadonlyArray<number>
  readonly timeDeltas: ReadonlyArray<number>
}

const arg = (name: string, fallback: string) => {
  const at = process.argv.indexOf(`--${name}`)
  return at >= 0 && process.argv[at + 1] ? process.argv[at + 1]! : fallback
}
const file = process.argv[2]
if (!file) throw new Error("usage: npx tsx bench/profileTop.ts <file.cpuprofile> [--top N] [--last SECONDS]")
const top = Number(arg("top", "25"))
const last = Number(arg("last", "0"))

const profile = JSON.parse(fs.readFileSync(file, "utf8")) as Profile
const nodes = new Map(profile.nodes.map((node) => [node.id, node]))
const where = (url: string) => url.replace(/^.*node_modules\//, "").replace(/^file:\/\/.*?\/src\//, "src/")

/** Which part of the process a frame belongs to: a package, Cairn's own code, Node, GC. */
const part = (node: ProfileNode) => {
  const { functionName, url } = node.callFrame
  if (functionName === "(garbage collector)") return "garbage collection"
  if (functionName === "(idle)" || functionName === "(program)") return functionName
  if (url.startsWith("wasm://")) return "PGlite (WASM)"
  const file = where(url)
  if (file.startsWith("src/")) return "Cairn (src/)"
  if (file.startsWith("node:")) return "Node internals"
  if (file === "") return "native"
  const scoped = file.split("/")
  return file.startsWith("@") ? `${scoped[0]}/${scoped[1]}` : scoped[0]!
}

// Each node's parent, to walk a sample's stack for inclusive time.
const parentOf = new Map<number, number>()
for (const node of profile.nodes) for (const child of node.children ?? []) parentOf.set(child, node.id)
const inclusive = new Map<string, number>()
const frameKey = (node: ProfileNode) => {
  const { functionName, url, lineNumber } = node.callFrame
  return `${functionName || "(anonymous)"} ${where(url)}${url ? `:${lineNumber + 1}` : ""}`
}

const from = last > 0 ? profile.endTime - last * 1e6 : 0
const self = new Map<string, number>()
const parts = new Map<string, number>()
let at = profile.startTime
let busy = 0
profile.samples.forEach((id, index) => {
  const delta = profile.timeDeltas[index] ?? 0
  at += delta
  if (at < from) return
  const node = nodes.get(id)!
  const category = part(node)
  if (category === "(idle)") return
  busy += delta
  const { functionName, url, lineNumber } = node.callFrame
  const key = `${functionName || "(anonymous)"} ${where(url)}${url ? `:${lineNumber + 1}` : ""}`
  self.set(key, (self.get(key) ?? 0) + delta)
  parts.set(category, (parts.get(category) ?? 0) + delta)
  // Inclusive time of Cairn's own functions: each counted once per sample it is on the stack of.
  const seen = new Set<string>()
  for (let walk: number | undefined = id; walk !== undefined; walk = parentOf.get(walk)) {
    const frame = nodes.get(walk)!
    if (part(frame) !== "Cairn (src/)") continue
    const name = frameKey(frame)
    if (seen.has(name)) continue
    seen.add(name)
    inclusive.set(name, (inclusive.get(name) ?? 0) + delta)
  }
})

const share = (us: number) => `${((100 * us) / busy).toFixed(1).padStart(5)}%`
console.log(`${file}: ${(busy / 1e6).toFixed(1)} s busy${last > 0 ? ` in the last ${last} s` : ""}`)
console.log("by part:")
for (const [name, us] of [...parts].sort((a, b) => b[1] - a[1]).filter(([, us]) => us / busy >= 0.005)) {
  console.log(`  ${share(us)}  ${name}`)
}
console.log(`top ${top} by self time:`)
for (const [name, us] of [...self].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`  ${share(us)}  ${name}`)
console.log(`top ${top} of Cairn's functions by inclusive time (the work they do themselves and call synchronously):`)
for (const [name, us] of [...inclusive].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`  ${share(us)}  ${name}`)
