/** Channel workspaces over HTTP and through the service, on both database backends. */
import { Effect } from "effect"
import * as fs from "node:fs"
import * as http from "node:http"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { maxFileBytes } from "../../src/workspaces/Model.ts"
import { Workspaces } from "../../src/workspaces/Workspaces.ts"
import { createKey } from "../auth/helpers.ts"
import { backends, tempDir } from "../support/database.ts"
import { json, startServer, type TestServer } from "../support/server.ts"

const iso = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/

describe.each(backends)("channel workspaces (%s)", (backend) => {
  let server: TestServer
  let channel: string
  let disabledChannel: string
  let outside: string
  const files = (id: string) => `/api/v1/channels/${id}/workspace/files`
  const put = (p: string, body: unknown, auth?: string) =>
    server.request(`${files(channel)}/${p}`, { method: "PUT", body: JSON.stringify(body), ...(auth ? { auth } : {}) })
  const get = (p: string) => server.request(`${files(channel)}/${p}`)
  const workspaceDir = () => path.join(server.db.dataDir, "workspaces", channel)
  const makeChannel = async (name: string, workspace_enabled: boolean) => {
    const response = await server.request("/api/v1/admin/channels", {
      method: "POST",
      body: JSON.stringify({ name, bot_id: "default", workspace_enabled })
    })
    expect(response.status).toBe(201)
    return (await json(response)).id as string
  }

  beforeAll(async () => {
    server = await startServer({ backend })
    channel = await makeChannel("With workspace", true)
    disabledChannel = await makeChannel("Without workspace", false)
    outside = tempDir("cairn-outside-")
    fs.writeFileSync(path.join(outside, "secret.txt"), "top secret")
  })
  afterAll(async () => {
    await server?.close()
    fs.rmSync(outside, { recursive: true, force: true })
  })

  describe("file round trip", () => {
    it("writes a text file, making its directories, and reads it back", async () => {
      const written = await put("notes/plans/today.md", { content: "# Today\n\n- ship it ✓\n" })
      expect(written.status).toBe(200)
      const body = await json(written)
      expect(body).toMatchObject({ path: "notes/plans/today.md", size: Buffer.byteLength("# Today\n\n- ship it ✓\n"), created: true })
      expect(body.modified_at).toMatch(iso)
      expect(fs.readFileSync(path.join(workspaceDir(), "notes/plans/today.md"), "utf8")).toBe("# Today\n\n- ship it ✓\n")
      const read = await json(await get("notes/plans/today.md"))
      expect(read).toEqual({
        path: "notes/plans/today.md",
        encoding: "utf8",
        content: "# Today\n\n- ship it ✓\n",
        size: body.size,
        modified_at: body.modified_at
      })
    })

    it("replaces a file (created false)", async () => {
      const again = await json(await put("notes/plans/today.md", { content: "done" }))
      expect(again).toMatchObject({ created: false, size: 4 })
      expect((await json(await get("notes/plans/today.md"))).content).toBe("done")
    })

    it("round-trips binary content as base64", async () => {
      const bytes = Buffer.from([0, 1, 2, 255, 254, 10, 0x89, 0x50])
      const written = await put("images/raw.bin", { content: bytes.toString("base64"), encoding: "base64" })
      expect(written.status).toBe(200)
      expect(fs.readFileSync(path.join(workspaceDir(), "images/raw.bin")).equals(bytes)).toBe(true)
      const read = await json(await get("images/raw.bin"))
      expect(read).toMatchObject({ encoding: "base64", content: bytes.toString("base64"), size: 8 })
    })

    it("reads a percent-encoded name", async () => {
      expect((await put("notes/a%20b%23c.md", { content: "spaced" })).status).toBe(200)
      expect(fs.existsSync(path.join(workspaceDir(), "notes", "a b#c.md"))).toBe(true)
      expect((await json(await get("notes/a%20b%23c.md"))).content).toBe("spaced")
    })

    it("lists every file recursively with size and modification time", async () => {
      const listing = await json(await server.request(files(channel)))
      expect(listing.truncated).toBe(false)
      expect(listing.files.map((f: any) => f.path)).toEqual(["images/raw.bin", "notes/a b#c.md", "notes/plans/today.md"])
      const today = listing.files.find((f: any) => f.path === "notes/plans/today.md")
      expect(today.size).toBe(4)
      expect(today.modified_at).toMatch(iso)
    })

    it("deletes a file; reading or deleting it again is 404", async () => {
      expect((await server.request(`${files(channel)}/images/raw.bin`, { method: "DELETE" })).status).toBe(204)
      expect(fs.existsSync(path.join(workspaceDir(), "images/raw.bin"))).toBe(false)
      const read = await get("images/raw.bin")
      expect(read.status).toBe(404)
      expect(await json(read)).toEqual({ detail: "File not found: images/raw.bin" })
      expect((await server.request(`${files(channel)}/images/raw.bin`, { method: "DELETE" })).status).toBe(404)
    })

    it("refuses a directory as a file and a file as a directory with 409", async () => {
      expect((await get("notes")).status).toBe(409)
      expect((await put("notes", { content: "x" })).status).toBe(409)
      expect((await put("notes/plans/today.md/child.md", { content: "x" })).status).toBe(422)
      expect((await server.request(`${files(channel)}/notes`, { method: "DELETE" })).status).toBe(409)
    })

    it(`refuses a file over ${maxFileBytes} bytes and bad base64 with 422, writing nothing`, async () => {
      const big = await put("big.txt", { content: "a".repeat(maxFileBytes + 1) })
      expect(big.status).toBe(422)
      expect((await json(big)).detail[0]).toMatchObject({ loc: ["body", "content"], type: "file_too_large" })
      const bad = await put("bad.bin", { content: "not base64!", encoding: "base64" })
      expect(bad.status).toBe(422)
      expect((await json(bad)).detail[0]).toMatchObject({ loc: ["body", "content"], type: "invalid_base64" })
      expect(fs.existsSync(path.join(workspaceDir(), "big.txt"))).toBe(false)
      expect(fs.existsSync(path.join(workspaceDir(), "bad.bin"))).toBe(false)
      const exact = await put("exact.txt", { content: "b".repeat(maxFileBytes) })
      expect(exact.status).toBe(200)
      expect((await server.request(`${files(channel)}/exact.txt`, { method: "DELETE" })).status).toBe(204)
    })
  })

  describe("traversal", () => {
    // Sent with node:http, which sends the path as written: fetch (WHATWG URL) would resolve "..",
    // and "%2e%2e" too, on the client before the server ever saw it.
    const rawRequest = (method: string, rawPath: string, body?: unknown) =>
      new Promise<{ status: number; body: any }>((resolve, reject) => {
        const payload = body === undefined ? undefined : JSON.stringify(body)
        const request = http.request(
          {
            host: "127.0.0.1",
            port: server.port,
            method,
            path: rawPath,
            headers: {
              authorization: `Bearer ${server.apiKey}`,
              ...(payload ? { "content-type": "application/json", "content-length": Buffer.byteLength(payload) } : {})
            }
          },
          (response) => {
            let text = ""
            response.setEncoding("utf8")
            response.on("data", (chunk) => (text += chunk))
            response.on("end", () => resolve({ status: response.statusCode ?? 0, body: text ? JSON.parse(text) : undefined }))
          }
        )
        request.on("error", reject)
        request.end(payload)
      })
    const vectors: Array<[string, string]> = [
      ["dot-dot segments", "../../../secret.txt"],
      ["dot-dot inside a path", "notes/../../secret.txt"],
      ["percent-encoded dot-dot", "%2e%2e/%2e%2e/%2e%2e/secret.txt"],
      ["encoded slashes", "..%2F..%2F..%2Fsecret.txt"],
      ["absolute path", "%2Fetc%2Fpasswd"],
      ["backslashes", "..%5C..%5Csecret.txt"],
      ["NUL byte", "notes%00.md"]
    ]
    it.each(vectors)("refuses %s on read, write and delete with 422", async (_name, raw) => {
      for (const method of ["GET", "PUT", "DELETE"]) {
        const response = await rawRequest(method, `${files(channel)}/${raw}`, method === "PUT" ? { content: "pwned" } : undefined)
        expect(response.status, `${method} ${raw}`).toBe(422)
        // The edge refuses a NUL before the route does (loc ["path"]); the route names the parameter.
        expect(response.body.detail[0].loc[0]).toBe("path")
      }
      expect(fs.readFileSync(path.join(outside, "secret.txt"), "utf8")).toBe("top secret")
    })

    it("refuses symlinks that lead outside the workspace (file and directory), and skips them in listings", async () => {
      fs.symlinkSync(path.join(outside, "secret.txt"), path.join(workspaceDir(), "leak.txt"))
      fs.symlinkSync(outside, path.join(workspaceDir(), "leakdir"))
      try {
        for (const p of ["leak.txt", "leakdir/secret.txt"]) {
          const read = await get(p)
          expect(read.status, p).toBe(422)
          expect((await json(read)).detail[0]).toMatchObject({ type: "path_outside_workspace" })
          expect((await put(p, { content: "pwned" })).status).toBe(422)
          expect((await server.request(`${files(channel)}/${p}`, { method: "DELETE" })).status).toBe(422)
        }
        expect((await put("leakdir/new.txt", { content: "pwned" })).status).toBe(422)
        expect(fs.existsSync(path.join(outside, "new.txt"))).toBe(false)
        expect(fs.readFileSync(path.join(outside, "secret.txt"), "utf8")).toBe("top secret")
        const listed = (await json(await server.request(files(channel)))).files.map((f: any) => f.path)
        expect(listed.some((p: string) => p.startsWith("leak"))).toBe(false)
      } finally {
        fs.rmSync(path.join(workspaceDir(), "leak.txt"))
        fs.rmSync(path.join(workspaceDir(), "leakdir"))
      }
    })

    it("follows a symlink that stays inside", async () => {
      fs.symlinkSync(path.join(workspaceDir(), "notes"), path.join(workspaceDir(), "shortcut"))
      fs.symlinkSync(path.join(workspaceDir(), "notes", "plans", "today.md"), path.join(workspaceDir(), "today-link.md"))
      try {
        expect((await json(await get("shortcut/plans/today.md"))).content).toBe("done")
        expect((await json(await get("today-link.md"))).content).toBe("done")
        // Deleting the link removes the link, not the file it points at.
        expect((await server.request(`${files(channel)}/today-link.md`, { method: "DELETE" })).status).toBe(204)
        expect(fs.existsSync(path.join(workspaceDir(), "today-link.md"))).toBe(false)
        expect(fs.readFileSync(path.join(workspaceDir(), "notes", "plans", "today.md"), "utf8")).toBe("done")
      } finally {
        fs.rmSync(path.join(workspaceDir(), "shortcut"))
      }
    })
  })

  describe("disabled workspace", () => {
    it("answers 409 for every file operation and creates no directory", async () => {
      for (
        const [method, url] of [
          ["GET", files(disabledChannel)],
          ["GET", `${files(disabledChannel)}/a.md`],
          ["PUT", `${files(disabledChannel)}/a.md`],
          ["DELETE", `${files(disabledChannel)}/a.md`]
        ] as const
      ) {
        const response = await server.request(url, {
          method,
          ...(method === "PUT" ? { body: JSON.stringify({ content: "x" }) } : {})
        })
        expect(response.status, `${method} ${url}`).toBe(409)
        expect((await json(response)).detail).toContain("not enabled")
      }
      const template = await server.request(`/api/v1/channels/${disabledChannel}/workspace/template`, {
        method: "POST",
        body: JSON.stringify({ template_id: "email-digest" })
      })
      expect(template.status).toBe(409)
      expect(fs.existsSync(path.join(server.db.dataDir, "workspaces", disabledChannel))).toBe(false)
    })

    it("answers 404 for an unknown channel, also to a service caller passing a non-uuid", async () => {
      expect((await server.request(files("00000000-0000-4000-8000-000000000000"))).status).toBe(404)
      const error = await server.run(Effect.flip(Effect.flatMap(Workspaces, (workspaces) => workspaces.list("../../etc"))))
      expect(error).toMatchObject({ _tag: "ChannelNotFound" })
    })

    it("makes the workspace on first use once enabled", async () => {
      const enabled = await server.request(`/api/v1/channels/${disabledChannel}`, {
        method: "PATCH",
        body: JSON.stringify({ workspace_enabled: true })
      })
      expect(enabled.status).toBe(200)
      expect(await json(await server.request(files(disabledChannel)))).toEqual({ files: [], truncated: false })
      expect(fs.existsSync(path.join(server.db.dataDir, "workspaces", disabledChannel))).toBe(true)
    })
  })

  describe("templates", () => {
    it("lists the email-digest template, made for the mailbox integration's channels", async () => {
      const { templates } = await json(await server.request("/api/v1/workspace-templates"))
      const digest = templates.find((t: any) => t.id === "email-digest")
      expect(digest).toMatchObject({
        name: "Email digest",
        source: "core",
        files: ["actions.md", "digest.md", "feeds.md", "triage.md"],
        integrations: ["mailbox"]
      })
    })

    it("applies email-digest without overwriting an existing file, then with overwrite", async () => {
      const fresh = await makeChannel("Mail", true)
      const mine = await server.request(`${files(fresh)}/triage.md`, { method: "PUT", body: JSON.stringify({ content: "my own triage" }) })
      expect(mine.status).toBe(200)
      const apply = (overwrite?: boolean) =>
        server.request(`/api/v1/channels/${fresh}/workspace/template`, {
          method: "POST",
          body: JSON.stringify({ template_id: "email-digest", ...(overwrite === undefined ? {} : { overwrite }) })
        })
      const first = await apply()
      expect(first.status).toBe(200)
      expect(await json(first)).toEqual({
        template_id: "email-digest",
        written: ["actions.md", "digest.md", "feeds.md"],
        skipped: ["triage.md"]
      })
      expect((await json(await server.request(`${files(fresh)}/triage.md`))).content).toBe("my own triage")
      const triage = fs.readFileSync(path.join(server.db.dataDir, "workspaces", fresh, "actions.md"), "utf8")
      expect(triage).toContain("# Actions")
      const second = await json(await apply(true))
      expect(second.written).toEqual(["actions.md", "digest.md", "feeds.md", "triage.md"])
      const content = (await json(await server.request(`${files(fresh)}/triage.md`))).content
      for (const category of ["## Urgent", "## Action Required", "## Projects/Threads", "## FYI", "## Low Priority"]) {
        expect(content).toContain(category)
      }
    })

    it("applies a template an integration registered; unknown ids and bad templates are refused", async () => {
      const registered = await server.run(
        Effect.flatMap(Workspaces, (workspaces) =>
          workspaces.registerTemplate(
            { id: "standup", name: "Stand-up", files: { "standup/today.md": "# Today\n", "README.md": "Stand-up notes" } },
            "integration:example"
          ))
      )
      expect(registered.files).toEqual(["README.md", "standup/today.md"])
      const applied = await server.request(`/api/v1/channels/${channel}/workspace/template`, {
        method: "POST",
        body: JSON.stringify({ template_id: "standup" })
      })
      expect(await json(applied)).toEqual({ template_id: "standup", written: ["README.md", "standup/today.md"], skipped: [] })
      expect((await json(await get("standup/today.md"))).content).toBe("# Today\n")

      const unknown = await server.request(`/api/v1/channels/${channel}/workspace/template`, {
        method: "POST",
        body: JSON.stringify({ template_id: "nope" })
      })
      expect(unknown.status).toBe(422)
      expect((await json(unknown)).detail[0]).toMatchObject({ loc: ["body", "template_id"], type: "unknown_template" })

      const bad = await server.run(
        Effect.flip(
          Effect.flatMap(
            Workspaces,
            (workspaces) => workspaces.registerTemplate({ id: "evil", name: "Evil", files: { "../../escape.md": "x" } })
          )
        )
      )
      expect(bad.detail[0]).toMatchObject({ loc: ["template", "files", "../../escape.md"], type: "invalid_path" })
      const { templates } = await json(await server.request("/api/v1/workspace-templates"))
      expect(templates.map((t: any) => t.id)).not.toContain("evil")
    })
  })

  describe("context listing", () => {
    it("puts notes in with their content and lists data/ files by name only", async () => {
      const mail = await makeChannel("Inbox", true)
      const write = (p: string, content: string) =>
        server.request(`${files(mail)}/${p}`, { method: "PUT", body: JSON.stringify({ content }) })
      expect((await write("triage.md", "# Triage\nURGENT-MARKER")).status).toBe(200)
      expect((await write("data/INBOX/2026-11-20-quarterly-report.md", "From: boss\n\nMAIL-BODY-MARKER")).status).toBe(200)
      expect((await write("data/INBOX/2026-11-21-lunch.md", "LUNCH-BODY-MARKER")).status).toBe(200)
      const listing = await server.run(Effect.flatMap(Workspaces, (workspaces) => workspaces.contextListing(mail)))
      expect(listing).toContain("### triage.md")
      expect(listing).toContain("URGENT-MARKER")
      expect(listing).toContain("data/INBOX/2026-11-20-quarterly-report.md")
      expect(listing).toContain("data/INBOX/2026-11-21-lunch.md")
      expect(listing).not.toContain("MAIL-BODY-MARKER")
      expect(listing).not.toContain("LUNCH-BODY-MARKER")
      const disabled = await makeChannel("No workspace", false)
      expect(await server.run(Effect.flatMap(Workspaces, (workspaces) => workspaces.contextListing(disabled)))).toBe("")
    })
  })

  it("reads, writes and deletes a file named by ?path= through the typed client, with the same refusals", async () => {
    const written = await server.call((client) =>
      client.workspaces.writeFile({
        path: { id: channel },
        urlParams: { path: "typed/notes on it.md" },
        payload: { content: "typed ✓", encoding: "utf8" }
      })
    )
    expect(written).toMatchObject({ path: "typed/notes on it.md", created: true })
    expect(fs.readFileSync(path.join(workspaceDir(), "typed/notes on it.md"), "utf8")).toBe("typed ✓")
    const read = await server.call((client) =>
      client.workspaces.readFile({ path: { id: channel }, urlParams: { path: "typed/notes on it.md" } })
    )
    expect(read).toMatchObject({ path: "typed/notes on it.md", encoding: "utf8", content: "typed ✓" })
    // The same file as the `*` route names it.
    expect((await json(await get("typed/notes%20on%20it.md"))).content).toBe("typed ✓")
    await server.call((client) => client.workspaces.deleteFile({ path: { id: channel }, urlParams: { path: "typed/notes on it.md" } }))
    expect(fs.existsSync(path.join(workspaceDir(), "typed/notes on it.md"))).toBe(false)
    const file = (query: string, init: RequestInit & { auth?: string } = {}) =>
      server.request(`/api/v1/channels/${channel}/workspace/file${query}`, init)
    expect((await file("?path=typed/notes%20on%20it.md")).status).toBe(404)
    expect((await file("?path=")).status).toBe(422)
    expect((await file("")).status).toBe(422)
    for (const bad of ["../../etc/passwd", "a%00b.md", "x".repeat(10_000), "%2Fetc%2Fpasswd"]) {
      const status = (await file(`?path=${bad}`)).status
      expect(status, bad.slice(0, 20)).toBeGreaterThanOrEqual(400)
      expect(status, bad.slice(0, 20)).toBeLessThan(500)
    }
    const closed = await makeChannel("Closed workspace", false)
    expect((await server.request(`/api/v1/channels/${closed}/workspace/file?path=a.md`)).status).toBe(409)
    const reader = await createKey(server, ["workspaces.files:read"])
    expect((await file("?path=a.md", { method: "PUT", body: JSON.stringify({ content: "x" }), auth: reader.key })).status).toBe(403)
  })

  it("checks the scopes workspaces.files:read/write and workspaces:write", async () => {
    const reader = await createKey(server, ["workspaces.files:read"])
    const writer = await createKey(server, ["workspaces.files:write"])
    expect((await server.request(files(channel), { auth: reader.key })).status).toBe(200)
    expect((await put("scoped.md", { content: "x" }, reader.key)).status).toBe(403)
    expect((await put("scoped.md", { content: "x" }, writer.key)).status).toBe(200)
    expect((await server.request(files(channel), { auth: writer.key })).status).toBe(403)
    const template = await server.request(`/api/v1/channels/${channel}/workspace/template`, {
      method: "POST",
      body: JSON.stringify({ template_id: "email-digest" }),
      auth: writer.key
    })
    expect(template.status).toBe(403)
    expect((await server.request(files(channel), { auth: null })).status).toBe(401)
  })
})
