/**
 * The chaos run (`npm run test:chaos`): test/chaos/, a server killed with SIGKILL at each step of
 * the inbound pipeline and restarted, on both databases. Kept out of the full suite for its length
 * (about 13 minutes a database on 2 cores); it shares the suite's settings and global setup.
 */
import { defineConfig } from "vitest/config"
import full from "./vitest.config.ts"

export default defineConfig({ ...full, test: { ...full.test, include: ["test/chaos/**/*.test.ts"], exclude: ["**/node_modules/**"] } })
