/**
 * Reads what `bench/pgliteTime.mjs` wrote (one file per server) and prints each server's PGlite
 * time per turn, in all and by statement.
 *
 *   npx tsx bench/pgliteTimeReport.ts <pglite-time.PID.json ...> --turns <turns the server ran, warm-up included> [--top 8]
 */
import * as fs from "node:fs"

const args = process.argv.slice(2)
const option = (name: string, fallback: string) => {
  const at = args.indexOf(`--${name}`)
  return at >= 0 && args[at + 1] ? args.splice(at, 2)[1]! : fallback
}
const turns = Number(option("turns", "0"))
const top = Number(option("top", "8"))
if (!(turns > 0) || args.length === 0) throw new Error("usage: pgliteTimeReport.ts <files...> --turns N [--top 8]")

for (const file of args) {
  const rows = (JSON.parse(fs.readFileSync(file, "utf8")) as Array<{ statement: string; ms: number; calls: number }>).sort((a, b) =>
    b.ms - a.ms
  )
  const ms = rows.reduce((sum, row) => sum + row.ms, 0)
  const calls = rows.reduce((sum, row) => sum + row.calls, 0)
  console.log(`${file}: ${(ms / turns).toFixed(3)} ms and ${(calls / turns).toFixed(2)} calls into PGlite a turn`)
  console.log("| ms a turn | calls a turn | ms a call | statement |\n|---|---|---|---|")
  for (const row of rows.slice(0, top)) {
    console.log(
      `| ${(row.ms / turns).toFixed(3)} | ${(row.calls / turns).toFixed(2)} | ${(row.ms / row.calls).toFixed(3)} | ${
        row.statement.replace(/\|/g, "\\|")
      } |`
    )
  }
}
