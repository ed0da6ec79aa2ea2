/**
 * Backup and restore, on PGlite and on PostgreSQL: a backup made while the server runs (progress,
 * history, download) → a new empty data directory and database → `cairn restore` → the same
 * sessions and messages, keys, documents, attachments and workspace files. A restore into a place
 * that is not empty is refused; a backup made by an older schema is restored and brought forward.
 * Restart: refused without a supervisor, a graceful exit with code 75 under one.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as Migrations from "../../src/db/Migrations.ts"
import { pack, writeManifest } from "../../src/operations/Archive.ts"
import { dumpDatabase } from "../../src/operations/Dump.ts"
import { createKey } from "../auth/helpers.ts"
import { type FakeLlm, startFakeLlm } from "../fixtures/fakeLlm.ts"
import { type Backend, backends, createTestDatabase, tempDir, type TestDatabase, withDatabase } from "../support/database.ts"
import { json, runCli, spawnDeadlineMs, spawnServer, startServer, type TestServer } from "../support/server.ts"
import { scaled } from "../support/time.ts"

const png = Buffer.from("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==", "base64")

const dbEnv = (db: TestDatabase): Record<string, string> => ({
  DATA_DIR: db.dataDir,
  ...(db.databaseUrl ? { DATABASE_URL: db.databaseUrl } : {})
})

const waitForBackup = async (server: TestServer, id: string) => {
  for (let i = 0; i < 200; i++) {
    const backup = await json(await server.request(`/api/v1/admin/operations/backup/${id}`))
    if (backup.status !== "running") return backup
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  throw new Error("The backup did not finish in 20 s")
}

describe.each(backends)("backup and restore (%s)", (backend: Backend) => {
  let llm: FakeLlm
  let source: TestDatabase
  let target: TestDatabase
  let archive: string
  const made: {
    sessionId?: string
    messages?: unknown
    keyToken?: string
    documentId?: string
    channelId?: string
    attachmentId?: string
  } = {}

  beforeAll(async () => {
    llm = await startFakeLlm({ defaultReply: { text: "Kept safe." } })
    source = await createTestDatabase(backend)
    target = await createTestDatabase(backend)
  })
  afterAll(async () => {
    await source?.drop()
    await target?.drop()
    await llm?.close()
  })

  it("backs up a running server: progress, history and a downloadable archive", async () => {
    const server = await startServer({
      backend,
      db: source,
      env: { OPENAI_BASE_URL: llm.url, OPENAI_API_KEY: "sk-backup-test", DEFAULT_MODEL: "fake-model" }
    })
    try {
      const chat = await json(
        await server.request("/chat", { method: "POST", body: JSON.stringify({ message: "Remember the lighthouse", client_id: "keeper" }) })
      )
      made.sessionId = chat.session_id
      made.messages = (await json(await server.request(`/api/v1/sessions/${made.sessionId}/messages`))).map((
        m: { role: string; content: string }
      ) => [m.role, m.content])
      made.keyToken = (await createKey(server, ["sessions:read"])).key
      const document = await json(
        await server.request("/api/v1/documents", {
          method: "POST",
          body: JSON.stringify({ title: "Lighthouse log", content: "The lamp was lit at dusk.", integration_id: "logbook" })
        })
      )
      made.documentId = document.id
      const channel = await json(
        await server.request("/api/v1/admin/channels", {
          method: "POST",
          body: JSON.stringify({ name: "harbour", bot_id: "default", workspace_enabled: true })
        })
      )
      made.channelId = channel.id
      expect(
        (await server.request(`/api/v1/channels/${channel.id}/workspace/files/notes/tide.md`, {
          method: "PUT",
          body: JSON.stringify({ content: "High tide at 06:12" })
        })).status
      ).toBe(200)
      const form = new FormData()
      form.append("file", new Blob([png]), "lamp.png")
      made.attachmentId = (await json(await server.request("/api/v1/attachments/upload", { method: "POST", body: form }))).id

      const started = await server.request("/api/v1/admin/operations/backup", { method: "POST" })
      expect(started.status).toBe(202)
      const running = await json(started)
      expect(running).toMatchObject({ status: "running", trigger: "manual", tables_done: 0 })
      // The answer counts the tables to dump, so progress reads "0 of all" from the start.
      expect(running.tables_total).toBeGreaterThan(10)
      const backup = await waitForBackup(server, running.id)
      expect(backup).toMatchObject({
        status: "complete",
        error: null,
        download_url: `/api/v1/admin/operations/backup/${running.id}/download`
      })
      expect(backup.tables_done).toBe(backup.tables_total)
      expect(backup.rows_written).toBeGreaterThan(5)
      expect(backup.files_written).toBeGreaterThanOrEqual(2)
      expect(backup.size_bytes).toBeGreaterThan(0)
      const history = await json(await server.request("/api/v1/admin/operations/backup/history"))
      expect(history[0].id).toBe(running.id)
      const download = await server.request(backup.download_url)
      expect(download.status).toBe(200)
      expect(download.headers.get("content-disposition")).toContain(backup.file_name)
      const bytes = Buffer.from(await download.arrayBuffer())
      expect(bytes.length).toBe(backup.size_bytes)
      expect([bytes[0], bytes[1]]).toEqual([0x1f, 0x8b])
      archive = path.join(tempDir("cairn-archive-"), backup.file_name)
      fs.writeFileSync(archive, bytes)
    } finally {
      await server.close()
    }
    // A deadline for a heavy test (a server booted, a document embedded with the word vectors loaded, a whole backup).
  }, scaled(150_000))

  it("restores into an empty data directory and database: the same sessions, keys, documents, attachments and files", async () => {
    const restored = await runCli(["restore", archive], dbEnv(target))
    expect(restored.output).toContain("Restored")
    expect(restored.code).toBe(0)
    const server = await startServer({
      backend,
      db: target,
      env: { OPENAI_BASE_URL: llm.url, OPENAI_API_KEY: "sk-backup-test", DEFAULT_MODEL: "fake-model" }
    })
    try {
      const messages = (await json(await server.request(`/api/v1/sessions/${made.sessionId}/messages`))).map((
        m: { role: string; content: string }
      ) => [m.role, m.content])
      expect(messages).toEqual(made.messages)
      expect((await server.request(`/api/v1/sessions/${made.sessionId}/messages`, { auth: made.keyToken! })).status).toBe(200)
      expect((await json(await server.request(`/api/v1/documents/${made.documentId}`))).content).toBe("The lamp was lit at dusk.")
      const found = await json(await server.request("/api/v1/documents/search?q=lamp"))
      expect(found.map((d: { id: string }) => d.id)).toContain(made.documentId)
      const file = await server.request(`/api/v1/attachments/${made.attachmentId}/file`)
      expect(Buffer.from(await file.arrayBuffer()).equals(png)).toBe(true)
      expect((await json(await server.request(`/api/v1/channels/${made.channelId}/workspace/files/notes/tide.md`))).content).toBe(
        "High tide at 06:12"
      )
      // The sequences go on: a new message after the restored ones.
      llm.script({ text: "Still here." })
      expect(
        (await server.request("/chat", { method: "POST", body: JSON.stringify({ message: "And now?", session_id: made.sessionId }) }))
          .status
      ).toBe(200)
      const after = await json(await server.request(`/api/v1/sessions/${made.sessionId}/messages`))
      expect(after.at(-1).content).toBe("Still here.")
    } finally {
      await server.close()
    }
    const again = await runCli(["restore", archive], dbEnv(target))
    expect(again.code).not.toBe(0)
    expect(again.output).toMatch(/is not empty|already has/)
  }, scaled(120_000))
})

describe.each(backends)("a backup made by an older release (%s)", (backend: Backend) => {
  it("is restored into the schema it was made with, then migrated to this release", async () => {
    const old = await createTestDatabase(backend)
    const fresh = await createTestDatabase(backend)
    try {
      // The release of migration 57: no session owners, no todos, no attachments.
      const sessionId = "6f1c1f8e-1111-4d2b-9a33-0a0b0c0d0e0f"
      const staging = tempDir("cairn-old-backup-")
      await withDatabase(
        old,
        Effect.gen(function*() {
          yield* Migrations.run({ upTo: 57 })
          const sql = yield* SqlClient.SqlClient
          yield* sql`INSERT INTO sessions (id, bot_id, client_id, title) VALUES (${sessionId}, 'default', 'old-client', 'From the old days')`
          yield* sql`INSERT INTO messages (id, session_id, role, content) VALUES (${crypto.randomUUID()}, ${sessionId}, 'user', 'hello from 57')`
          yield* sql`INSERT INTO settings (key, value) VALUES ('RATE_LIMIT_CHAT', '"12/minute"'::jsonb)`
          const dumped = yield* dumpDatabase(path.join(staging, "database"), () => Effect.void)
          expect(dumped.schemaVersion).toBe(57)
          fs.mkdirSync(path.join(staging, "files"))
          fs.writeFileSync(path.join(staging, "files", "jwt_secret"), "an-old-secret-of-at-least-thirty-two-characters")
          writeManifest(staging, {
            format: "cairn-backup",
            version: 1,
            created_at: new Date().toISOString(),
            backend,
            schema_version: 57,
            tables: dumped.tables,
            files: 1
          })
        })
      )
      const archive = path.join(tempDir("cairn-old-archive-"), "old.tar.gz")
      await Effect.runPromise(pack(staging, archive))
      const restored = await runCli(["restore", archive], dbEnv(fresh))
      if (restored.code !== 0) console.error(restored.output)
      expect(restored.code).toBe(0)
      expect(restored.output).toMatch(/migrations .*brought it from schema 57/)
      const server = await startServer({ backend, db: fresh })
      try {
        const messages = await json(await server.request(`/api/v1/sessions/${sessionId}/messages`))
        expect(messages.map((m: { content: string }) => m.content)).toEqual(["hello from 57"])
        const settings = await json(await server.request("/api/v1/admin/settings"))
        expect(settings.settings.find((s: { key: string }) => s.key === "RATE_LIMIT_CHAT")).toMatchObject({
          value: "12/minute",
          source: "stored"
        })
        // Newer migrations ran: todos exist now, and the session is usable with them.
        expect((await server.request("/api/v1/todos")).status).toBe(200)
        expect(fs.readFileSync(path.join(fresh.dataDir, "jwt_secret"), "utf8")).toBe("an-old-secret-of-at-least-thirty-two-characters")
      } finally {
        await server.close()
      }
    } finally {
      await old.drop()
      await fresh.drop()
    }
  }, scaled(120_000))
})

describe("backup retention and schedule (pglite)", () => {
  it("keeps BACKUP_RETENTION archives, and makes a scheduled backup when one is due", async () => {
    const server = await startServer({ backend: "pglite", env: { BACKUP_INTERVAL_HOURS: "24", BACKUP_RETENTION: "1" } })
    try {
      // Due at start (none was ever made): the schedule makes one.
      let history: Array<{ id: string; trigger: string; status: string }> = []
      for (let i = 0; i < 100 && !history.some((b) => b.trigger === "scheduled" && b.status === "complete"); i++) {
        await new Promise((resolve) => setTimeout(resolve, 100))
        history = await json(await server.request("/api/v1/admin/operations/backup/history"))
      }
      const scheduled = history.find((b) => b.trigger === "scheduled")!
      expect(scheduled.status).toBe("complete")
      const manual = await json(await server.request("/api/v1/admin/operations/backup", { method: "POST" }))
      expect((await waitForBackup(server, manual.id)).status).toBe("complete")
      history = await json(await server.request("/api/v1/admin/operations/backup/history"))
      expect(history.map((b) => [b.trigger, b.status])).toEqual([
        ["manual", "complete"],
        ["scheduled", "expired"]
      ])
      expect((await server.request(`/api/v1/admin/operations/backup/${scheduled.id}/download`)).status).toBe(404)
      expect(fs.readdirSync(path.join(server.db.dataDir, "backups")).filter((f) => f.endsWith(".tar.gz"))).toHaveLength(1)
    } finally {
      await server.close()
    }
  }, scaled(60_000))
})

describe("restart", () => {
  it("is refused without a supervisor, and exits gracefully with code 75 under one", async () => {
    const db = await createTestDatabase("pglite")
    try {
      const unsupervised = await startServer({ backend: "pglite" })
      try {
        const refused = await unsupervised.request("/api/v1/admin/operations/restart", { method: "POST" })
        expect(refused.status).toBe(409)
        expect((await json(refused)).detail).toContain("SUPERVISED")
        expect((await unsupervised.request("/health")).status).toBe(200)
      } finally {
        await unsupervised.close()
      }
      const server = await spawnServer(db, { SUPERVISED: "true" })
      const exited = new Promise<number | null>((resolve) => server.process.on("exit", (code) => resolve(code)))
      const accepted = await server.request("/api/v1/admin/operations/restart", { method: "POST" })
      expect(accepted.status).toBe(202)
      expect(await json(accepted)).toEqual({ restarting: true, supervisor: "configured" })
      expect(await exited).toBe(75)
      expect(server.output()).toContain("Restart requested")
    } finally {
      await db.drop()
    }
  }, spawnDeadlineMs + scaled(60_000))
})
