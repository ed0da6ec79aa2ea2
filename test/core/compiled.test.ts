/**
 * The compiled start: the build `npm install` runs gives a dist/ that `cairn serve` runs as one
 * process (no tsx, whose esbuild service would be a child), with the project's integrations and the
 * lazily loaded docs pages working from it.
 */
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { createTestDatabase, type TestDatabase } from "../support/database.ts"
import { childPids, type ChildServer, spawnDeadlineMs, spawnServer } from "../support/server.ts"
import { scaled } from "../support/time.ts"

const root = path.resolve(import.meta.dirname, "../..")

describe("compiled server", () => {
  let db: TestDatabase | undefined
  let server: ChildServer | undefined
  afterAll(async () => {
    await server?.stop()
    await db?.drop()
  })

  it("builds dist/ and serves from it as one process: health, an integration's route, a docs page", async () => {
    const build = spawnSync(process.execPath, [path.join(root, "bin/build.mjs")], { cwd: root, encoding: "utf8" })
    expect(build.status, build.stderr).toBe(0)
    expect(fs.existsSync(path.join(root, "dist/server/src/cli.js"))).toBe(true)
    expect(fs.existsSync(path.join(root, "dist/server/integrations/example/router.js"))).toBe(true)

    // PostgreSQL: a first start there needs no initdb, so the test spends its time on what it checks.
    db = await createTestDatabase("postgres", { migrated: true })
    server = await spawnServer(db)
    const ping = await server.request("/integrations/example/ping")
    expect(ping.status).toBe(200)
    expect(await ping.json()).toMatchObject({ status: "ok", integration: "example" })
    const docs = await server.request("/redoc", { auth: null })
    expect(docs.status).toBe(200)
    expect(await docs.text()).toContain("/api/v1/admin/settings")
    expect(childPids(server.process.pid!)).toEqual([])
  }, spawnDeadlineMs + scaled(120_000))
})
