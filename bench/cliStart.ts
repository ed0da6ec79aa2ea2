/**
 * How long `cairn --version` and `cairn --help` take to answer, against `node -e 0` run in the same
 * loop: bin/cairn.mjs answers them from dist/server/help.json without loading Effect, the client or
 * the server. The "whole CLI" row runs dist/server/src/cli.js itself, which loads every command
 * module before it answers: what `--version` cost before the quick path. Needs `npm run build:server`.
 *
 * With `--before <checkout>` (its dist/ built) the whole CLI of that checkout runs in the loop too.
 *
 *     npx tsx bench/cliStart.ts [runs] [--before <checkout>]
 */
import { spawnSync } from "node:child_process"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { loadAverage } from "./proc.ts"

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")
const args = process.argv.slice(2)
const before = args.includes("--before") ? path.resolve(args[args.indexOf("--before") + 1]!) : undefined
const runs = Number(args.find((arg) => /^\d+$/.test(arg)) ?? 15)

const cases: ReadonlyArray<readonly [string, ReadonlyArray<string>]> = [
  ["node -e 0 (baseline)", ["-e", "0"]],
  ["cairn --version", [path.join(root, "bin/cairn.mjs"), "--version"]],
  ["cairn --help", [path.join(root, "bin/cairn.mjs"), "--help"]],
  ["cairn tasks list --help", [path.join(root, "bin/cairn.mjs"), "tasks", "list", "--help"]],
  ["whole CLI: dist/server/src/cli.js --version", [path.join(root, "dist/server/src/cli.js"), "--version"]],
  ...(before === undefined ? [] : [
    [`whole CLI of ${path.basename(before)}: dist/server/src/cli.js --version`, [
      path.join(before, "dist/server/src/cli.js"),
      "--version"
    ]] as const
  ])
]

const timeOnce = (args: ReadonlyArray<string>) => {
  const started = performance.now()
  const result = spawnSync(process.execPath, args, { cwd: root, stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, NO_COLOR: "1" } })
  if (result.status !== 0) throw new Error(`${args.join(" ")} exited ${result.status}: ${result.stderr}`)
  return performance.now() - started
}

const samples = cases.map(() => [] as Array<number>)
for (let i = 0; i < runs + 2; i++) {
  // Interleaved, so a busy moment of the machine touches every case alike; two warm-up rounds.
  cases.forEach(([, args], c) => {
    const ms = timeOnce(args)
    if (i >= 2) samples[c]!.push(ms)
  })
}

const median = (values: ReadonlyArray<number>) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!
const baseline = median(samples[0]!)
console.log(`${runs} runs each, interleaved; load average ${loadAverage()}`)
console.log("| command | median ms | ratio to node -e 0 |")
console.log("|---|---|---|")
cases.forEach(([name], c) => {
  const ms = median(samples[c]!)
  console.log(`| ${name} | ${ms.toFixed(0)} | ${(ms / baseline).toFixed(1)}x |`)
})
