import * as os from "node:os"
import { defineConfig } from "vitest/config"
import { scaled } from "./test/support/time.ts"

/** TEST_WORKERS, or two per core up to eight (PostgreSQL's connections; bench/README.md, "The suite's workers"). */
const testWorkers = Number(process.env.TEST_WORKERS) || Math.min(2 * os.availableParallelism(), 8)

// Deadlines, not speeds: each stretches with TEST_TIME_SCALE (test/support/time.ts) on a busy machine.
export default defineConfig({
  test: {
    include: ["test/**/*.test.ts", "integrations/**/*.test.ts"],
    // The fault runs are part of the suite, and each has its own command too (vitest.faults.config.ts):
    // test/cluster/ (hosts in network namespaces, docs/operations.md "Several hosts") needs root and
    // the Debian packages .ci/run installs.
    exclude: ["**/node_modules/**"],
    // Migrated databases the tests' databases are copied from (test/support/template.ts).
    globalSetup: ["test/support/globalSetup.ts"],
    testTimeout: scaled(60_000),
    hookTimeout: scaled(120_000),
    // expect.poll's own default (1 s) is a deadline too short for a machine busy with other work.
    expect: { poll: { timeout: scaled(10_000) } },
    pool: "forks",
    // One process per worker for all its files, not one per file: a file's tests already share the
    // server's modules, and every file starts its own servers, databases and peers, so nothing of
    // worth is shared; each file was paying seconds to import the server again.
    // Two files per core: a file spends much of its time waiting (on a child server's start, a
    // restart, a lease, a browser), and with one per core the cores were idle 40 % of the run.
    poolOptions: { forks: { maxForks: testWorkers, minForks: 1, isolate: false } },
    reporters: ["default"]
  }
})
