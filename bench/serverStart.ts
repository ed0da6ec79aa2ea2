/**
 * A server's start, to a healthy `/health`: CPU and wall time of `cairn serve` (compiled, what
 * `npm start` runs) from this checkout against another (`--before`, its dist/ built), starts
 * interleaved so both meet the same machine. Each start gets a fresh copy of the migrated template
 * (test/support/template.ts), as most test servers and every restart do: no migration runs.
 *
 *   npx tsx bench/serverStart.ts --before <checkout> [--runs 8] [pglite|postgres|both]
 */
import * as path from "node:path"
import { type Backend, createTestDatabase } from "../test/support/database.ts"
import setupTemplates from "../test/support/globalSetup.ts"
import { spawnServer } from "../test/support/server.ts"
import { cpuMs, loadAverage } from "./proc.ts"

const root = path.resolve(import.meta.dirname, "..")
const args = process.argv.slice(2)
const valueOf = (name: string) => (args.includes(`--${name}`) ? args[args.indexOf(`--${name}`) + 1] : undefined)
const beforeRoot = valueOf("before")
if (!beforeRoot) throw new Error("--before <checkout> is required: a checkout of the code to compare with, its dist/ built")
const runs = Number(valueOf("runs") ?? "8")
const which = args.find((arg) => ["pglite", "postgres", "both"].includes(arg)) ?? "both"
const backends: ReadonlyArray<Backend> = which === "both" ? ["pglite", "postgres"] : [which as Backend]

const median = (values: ReadonlyArray<number>) => {
  const sorted = [...values].sort((a, b) => a - b)
  const middle = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2
}

/** One start of the checkout at `serverRoot`: its CPU (ms, the process's own) and wall time to healthy. */
const startOnce = async (backend: Backend, serverRoot: string) => {
  const db = await createTestDatabase(backend, { migrated: true })
  const began = performance.now()
  const server = await spawnServer(db, { LOG_LEVEL: "warning" }, [], serverRoot)
  const wallMs = performance.now() - began
  const cpu = cpuMs(server.process.pid)
  await server.stop()
  await db.drop()
  return { cpu, wallMs }
}

await setupTemplates()
console.log(`load average at the start: ${loadAverage()}; ${runs} starts of each, interleaved\n`)
console.log("| database | checkout | median CPU to healthy (ms) | median wall (ms) | CPU ratio to before |")
console.log("|---|---|---|---|---|")
for (const backend of backends) {
  const samples = { before: [] as Array<{ cpu: number; wallMs: number }>, after: [] as Array<{ cpu: number; wallMs: number }> }
  // One of each first, unrecorded: the page cache and the template are warm for both.
  await startOnce(backend, path.resolve(beforeRoot))
  await startOnce(backend, root)
  for (let i = 0; i < runs; i++) {
    samples.before.push(await startOnce(backend, path.resolve(beforeRoot)))
    samples.after.push(await startOnce(backend, root))
  }
  const cpuBefore = median(samples.before.map((s) => s.cpu))
  for (const [label, list] of Object.entries(samples)) {
    const cpu = median(list.map((s) => s.cpu))
    console.log(
      `| ${backend} | ${label} | ${Math.round(cpu)} | ${Math.round(median(list.map((s) => s.wallMs)))} | ${(cpu / cpuBefore).toFixed(2)}x |`
    )
  }
}
console.log(`\nload average at the end: ${loadAverage()}`)
process.exit(0)
