import { defineConfig } from "vitest/config"
import { scaled } from "./test/support/time.ts"

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
    poolOptions: { forks: { maxForks: 2, minForks: 1, isolate: false } },
    reporters: ["default"]
  }
})
