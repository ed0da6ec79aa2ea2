/**
 * The fault runs, each with a command of its own: `npm run test:chaos` (test/chaos/: a server
 * killed with SIGKILL at each step of the inbound pipeline and restarted, on both databases; also
 * part of `npm test`) and `npm run test:cluster` (test/cluster/: hosts in network namespaces
 * behind HAProxy, as root, about 2-5 minutes; not part of `npm test` while its partition scenario
 * finds a known double answer, docs/operations.md). They share the suite's settings and global setup.
 */
import { defineConfig } from "vitest/config"
import full from "./vitest.config.ts"

export default defineConfig({
  ...full,
  test: { ...full.test, include: ["test/chaos/**/*.test.ts", "test/cluster/**/*.test.ts"], exclude: ["**/node_modules/**"] }
})
