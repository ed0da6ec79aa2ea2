/**
 * The long fault runs, each its own command, kept out of the full suite for their length:
 * `npm run test:chaos` (test/chaos/: a server killed with SIGKILL at each step of the inbound
 * pipeline and restarted, on both databases, about 13 minutes a database on 2 cores) and
 * `npm run test:cluster` (test/cluster/: hosts in network namespaces behind HAProxy, as root, about
 * 2-5 minutes). They share the suite's settings and global setup.
 */
import { defineConfig } from "vitest/config"
import full from "./vitest.config.ts"

export default defineConfig({
  ...full,
  test: { ...full.test, include: ["test/chaos/**/*.test.ts", "test/cluster/**/*.test.ts"], exclude: ["**/node_modules/**"] }
})
