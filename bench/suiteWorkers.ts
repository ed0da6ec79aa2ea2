/**
 * The suite's workers: the same test files run by vitest with a few worker counts (`maxForks`,
 * vitest.config.ts), interleaved round by round so every count meets the same machine. For each
 * run: wall time, the CPU of vitest's process tree as GNU time counts it (only processes waited
 * for: PostgreSQL's backends, for one, are not its children), and whether every test passed. A count that
 * fails a test is reported, not hidden: the point is a faster suite that stays green.
 *
 *   npx tsx bench/suiteWorkers.ts [--workers 2,4] [--rounds 2] [--files <file,...>]
 *
 * The default files mix the suite's kinds, each 5-50 s of the suite's time (so no one file sets the
 * run's length): child servers stopped and restarted (drain, replicas), a browser, the CLI in a
 * terminal, PGlite and PostgreSQL in process, a leader lease, the word vectors. Needs what
 * `npm test` needs (TEST_DATABASE_URL, Chromium, tmux).
 */
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { median } from "./corpus.ts"
import { loadAverage } from "./proc.ts"

const args = process.argv.slice(2)
const valueOf = (name: string) => (args.includes(`--${name}`) ? args[args.indexOf(`--${name}`) + 1] : undefined)
const workerCounts = (valueOf("workers") ?? "2,4").split(",").map(Number)
const rounds = Number(valueOf("rounds") ?? "2")
const files = (valueOf("files") ?? [
  "test/health/drain.test.ts",
  "test/web/chatVersions.test.ts",
  "test/cli/firstHour.test.ts",
  "test/heartbeats/heartbeats.test.ts",
  "test/chat/fairness.test.ts",
  "test/db/pglite.test.ts",
  "test/replicas/replicas.test.ts",
  "test/workflows/workflows.test.ts",
  "test/documents/documents.test.ts",
  "test/documents/embedders.test.ts"
].join(",")).split(",")

interface Run {
  readonly wallS: number
  readonly cpuS: number
  readonly passed: number
  readonly failed: number
}

const once = (workers: number): Run => {
  const report = path.join(os.tmpdir(), `cairn-bench-suite-${process.pid}.json`)
  // GNU time measures the CPU of vitest and every process it waited for, its workers and their children.
  const run = spawnSync(
    "/usr/bin/time",
    [
      "-f",
      "%e %U %S",
      "npx",
      "vitest",
      "run",
      ...files,
      `--poolOptions.forks.maxForks=${workers}`,
      "--reporter=json",
      `--outputFile=${report}`
    ],
    { encoding: "utf8", maxBuffer: 256 * 1024 ** 2 }
  )
  const [wallS, userS, systemS] = run.stderr.trim().split("\n").at(-1)!.split(" ").map(Number)
  // vitest writes no report when it ends on an error of its own (a worker it lost, say): shown, counted as a failure.
  if (!fs.existsSync(report)) {
    console.log(`vitest ended without a report (exit ${run.status}):\n${run.stdout.slice(-2000)}${run.stderr.slice(-2000)}`)
    return { wallS: wallS!, cpuS: userS! + systemS!, passed: 0, failed: 1 }
  }
  const results = JSON.parse(fs.readFileSync(report, "utf8")) as { numPassedTests: number; numFailedTests: number }
  fs.rmSync(report, { force: true })
  return { wallS: wallS!, cpuS: userS! + systemS!, passed: results.numPassedTests, failed: results.numFailedTests }
}

const counts = workerCounts.join(" and ")
console.log(`${files.length} files, ${rounds} rounds of ${counts} workers, interleaved; ${os.availableParallelism()} cores`)
console.log(`load average at the start: ${loadAverage()}\n`)
const runs = new Map(workerCounts.map((count) => [count, [] as Array<Run>]))
for (let round = 0; round < rounds; round++) {
  for (const count of workerCounts) {
    const run = once(count)
    runs.get(count)!.push(run)
    const tests = `${run.passed} passed, ${run.failed} failed`
    console.log(`round ${round + 1}, ${count} workers: ${run.wallS.toFixed(1)} s wall, ${run.cpuS.toFixed(1)} s CPU, ${tests}`)
  }
}
const baseline = median(runs.get(workerCounts[0]!)!.map((run) => run.wallS))
console.log(`\n| workers | median wall (s) | against ${workerCounts[0]} | median CPU (s) | failed tests |`)
console.log("|---|---|---|---|---|")
for (const [count, list] of runs) {
  const wall = median(list.map((run) => run.wallS))
  const failed = list.reduce((sum, run) => sum + run.failed, 0)
  const cpu = median(list.map((run) => run.cpuS))
  console.log(`| ${count} | ${wall.toFixed(1)} | ${(wall / baseline).toFixed(2)}x | ${cpu.toFixed(1)} | ${failed} |`)
}
console.log(`\nload average at the end: ${loadAverage()}`)
