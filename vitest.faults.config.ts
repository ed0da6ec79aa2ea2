/**
 * The fault runs, each with a command of its own and both part of `npm test`: `npm run test:chaos`
 * (test/chaos/: a server killed with SIGKILL at each step of the inbound pipeline and restarted, on
 * both databases) and `npm run test:cluster` (test/cluster/: hosts in network namespaces behind
 * HAProxy, as root, about 3 minutes; its partition scenario answers no task twice since a run's
 * end is fenced, docs/operations.md "Several hosts"). They share the suite's settings and global setup.
 */
import { defineConfig } from "vitest/config"
import full from "./vitest.config.ts"

export default defineConfig({
  ...full,
  test: { ...full.test, include: ["test/chaos/**/*.test.ts", "test/cluster/**/*.test.ts"], exclude: ["**/node_modules/**"] }
})
