import { defineConfig } from "vitest/config"
import { scaled } from "./test/support/time.ts"

// Deadlines, not speeds: each stretches with TEST_TIME_SCALE (test/support/time.ts) on a busy machine.
export default defineConfig({
  test: {
    include: ["test/**/*.test.ts", "integrations/**/*.test.ts"],
    // Two long fault runs take their own commands (vitest.faults.config.ts): the inbound chaos run
    // (`npm run test:chaos`, docs/operations.md "Fault injection") and the hosts in network
    // namespaces (`npm run test:cluster`, docs/operations.md "Several hosts").
    exclude: ["test/chaos/**", "test/cluster/**", "**/node_modules/**"],
    // Migrated databases the tests' databases are copied from (test/support/template.ts).
    globalSetup: ["test/support/globalSetup.ts"],
    testTimeout: scaled(60_000),
    hookTimeout: scaled(120_000),
    // expect.poll's own default (1 s) is a deadline too short for a machine busy with other work.
    expect: { poll: { timeout: scaled(10_000) } },
    pool: "forks",
    poolOptions: { forks: { maxForks: 2, minForks: 1 } },
    reporters: ["default"]
  }
})
