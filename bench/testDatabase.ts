/**
 * A PGlite test database's files: copying the migrated template into a new folder and removing it
 * again, as `createTestDatabase` and `drop` do for every PGlite test database, in the system's
 * temporary folder (disk) against the folder in memory `test/support/scratch.ts` picks (/dev/shm),
 * interleaved so both meet the same machine. Wall time of the test's own thread (the copy and the
 * removal are synchronous) and its CPU.
 *
 *   npx tsx bench/testDatabase.ts [--runs 10] [--disk <folder>] [--memory <folder>]
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import setupTemplates from "../test/support/globalSetup.ts"
import { pgliteTemplateDir, templateKey } from "../test/support/template.ts"
import { median } from "./corpus.ts"
import { loadAverage } from "./proc.ts"

const args = process.argv.slice(2)
const valueOf = (name: string) => (args.includes(`--${name}`) ? args[args.indexOf(`--${name}`) + 1] : undefined)
const runs = Number(valueOf("runs") ?? "10")
const places = { disk: valueOf("disk") ?? os.tmpdir(), memory: valueOf("memory") ?? "/dev/shm" }

const cpuNow = () => {
  const usage = process.cpuUsage()
  return (usage.user + usage.system) / 1000
}

await setupTemplates()
const template = pgliteTemplateDir(templateKey())

const once = (root: string) => {
  const dir = fs.mkdtempSync(path.join(root, "cairn-bench-db-"))
  const cpu = cpuNow()
  const began = performance.now()
  fs.cpSync(template, dir, { recursive: true })
  const copyMs = performance.now() - began
  fs.rmSync(dir, { recursive: true, force: true })
  return { copyMs, removeMs: performance.now() - began - copyMs, cpuMs: cpuNow() - cpu }
}

console.log(`template ${template}; load average at the start: ${loadAverage()}; ${runs} of each, interleaved\n`)
const samples = { disk: [] as Array<ReturnType<typeof once>>, memory: [] as Array<ReturnType<typeof once>> }
once(places.disk)
once(places.memory)
for (let i = 0; i < runs; i++) {
  samples.disk.push(once(places.disk))
  samples.memory.push(once(places.memory))
}
console.log("| folder | median copy (ms) | median removal (ms) | median CPU (ms) |")
console.log("|---|---|---|---|")
for (const [place, list] of Object.entries(samples)) {
  const row = [median(list.map((s) => s.copyMs)), median(list.map((s) => s.removeMs)), median(list.map((s) => s.cpuMs))]
  console.log(`| ${place}: ${places[place as keyof typeof places]} | ${row.map((v) => v.toFixed(0)).join(" | ")} |`)
}
console.log(`\nload average at the end: ${loadAverage()}`)
