/**
 * The integration framework over HTTP: discovery precedence across three directories, a broken
 * integration skipped, routes with auth, tools, skills, settings, sidebar, discover, and the
 * example integration end to end.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type FakeLlm, startFakeLlm } from "../fixtures/fakeLlm.ts"
import { backends, createTestDatabase, tempDir, type TestDatabase } from "../support/database.ts"
import { json, startServer, type TestServer } from "../support/server.ts"

const write = (file: string, text: string) => {
  fs.mkdirSync(path.dirname(file), { recursive: true })
  fs.writeFileSync(file, text)
}

/** A tiny integration folder; plain objects, so it needs no import at all. */
const integration = (dir: string, label: string) => {
  write(path.join(dir, "index.ts"), `export const name = "${label}"\nexport const version = "0.0.1"\n`)
  write(
    path.join(dir, "router.ts"),
    `export default [{ method: "GET", path: "/who", description: "which copy answers", scope: "bots:read", handler: () => ({ copy: "${label}" }) }]\n`
  )
}

describe.each(backends)("integration framework (%s)", (backend) => {
  let server: TestServer
  let db: TestDatabase
  let llm: FakeLlm
  const extraDir = tempDir("cairn-integrations-")
  const logs: Array<string> = []

  beforeAll(async () => {
    db = await createTestDatabase(backend)
    const sharedDir = path.join(db.dataDir, "workspace", "integrations")
    // The same id in the extra directory and the shared workspace: the workspace's copy wins.
    integration(path.join(extraDir, "twice"), "extra")
    integration(path.join(sharedDir, "twice"), "workspace")
    integration(path.join(extraDir, "onlyextra"), "only-extra")
    // Ignored names, and a broken integration that must not stop the server.
    integration(path.join(extraDir, "_draft"), "draft")
    integration(path.join(extraDir, ".hidden"), "hidden")
    write(path.join(extraDir, "broken", "router.ts"), "export default [{ method: 'GET', path: '/x', handler: 'not a function' }]\n")
    write(path.join(extraDir, "syntax", "hooks.ts"), "export default (cairn => {\n")
    // An integration that sends its secrets to a configurable server.
    integration(path.join(extraDir, "relay"), "relay")
    write(
      path.join(extraDir, "relay", "setup.ts"),
      `export const SETUP = { env_vars: [{ key: "RELAY_SERVER_URL" }, { key: "RELAY_NOTE" }, { key: "RELAY_TOKEN", secret: true }, { key: "RELAY_SIGNING_KEY", secret: true }] }\n`
    )
    write(
      path.join(extraDir, "relay", "router.ts"),
      `export default [{ method: "GET", path: "/where", description: "what the relay would use", scope: "settings:read", handler: async (_r, cairn) => ({ url: (await cairn.settings.get("RELAY_SERVER_URL")) ?? null, token: (await cairn.settings.get("RELAY_TOKEN")) ?? null, signing: (await cairn.settings.get("RELAY_SIGNING_KEY")) ?? null }) },
        { method: "POST", path: "/hook", description: "a peer's webhook", secret: { setting: "RELAY_SIGNING_KEY", header: "x-relay-token", query: "token" }, handler: (r) => ({ ran: true, body: r.body }) }]\n`
    )
    // Routes without a key or a shared secret, or with a secret that is not a secret setting: refused at load.
    write(
      path.join(extraDir, "opendoor", "router.ts"),
      `export default [{ method: "POST", path: "/hook", description: "unchecked", public: true, handler: () => ({ ran: true }) }]\n`
    )
    write(path.join(extraDir, "plainsecret", "setup.ts"), `export const SETUP = { env_vars: [{ key: "PLAIN_NOTE" }] }\n`)
    write(
      path.join(extraDir, "plainsecret", "router.ts"),
      `export default [{ method: "POST", path: "/hook", description: "a note is no secret", secret: { setting: "PLAIN_NOTE", query: "token" }, handler: () => ({ ran: true }) }]\n`
    )
    llm = await startFakeLlm()
    server = await startServer({
      backend,
      db,
      env: {
        INTEGRATION_DIRS: extraDir,
        OPENAI_BASE_URL: llm.url,
        OPENAI_API_KEY: "sk-test-integrations",
        DEFAULT_MODEL: "fake-model",
        EXAMPLE_GREETING: "Hi from env",
        RELAY_SIGNING_KEY: "signing-from-env",
        LOG_LEVEL: "error"
      },
      onLog: (line) => logs.push(line)
    })
  })
  afterAll(async () => {
    await server?.close()
    await db?.drop()
    await llm?.close()
    fs.rmSync(extraDir, { recursive: true, force: true })
  })

  const scopedKey = async (scopes: Array<string>) => {
    const response = await server.request("/api/v1/admin/api-keys", { method: "POST", body: JSON.stringify({ name: "probe", scopes }) })
    expect(response.status).toBe(201)
    return (await json(response)).key as string
  }

  it("discovers integrations in order: project, INTEGRATION_DIRS, shared workspace", async () => {
    const { integrations } = await json(await server.request("/api/v1/admin/integrations"))
    const byId = new Map(integrations.map((i: { id: string }) => [i.id, i]))
    expect([...byId.keys()]).toEqual(expect.arrayContaining(["example", "twice", "onlyextra", "broken", "syntax"]))
    expect(byId.has("_draft")).toBe(false)
    expect(byId.has(".hidden")).toBe(false)
    const twice = byId.get("twice") as { dir: string; overrides: Array<string>; name: string }
    expect(twice.dir).toContain(path.join("workspace", "integrations", "twice"))
    expect(twice.overrides).toEqual([path.join(extraDir, "twice")])
    expect(twice.name).toBe("workspace")
    const who = await json(await server.request("/integrations/twice/who"))
    expect(who).toEqual({ copy: "workspace" })
    expect(await json(await server.request("/integrations/onlyextra/who"))).toEqual({ copy: "only-extra" })
  })

  it("logs and skips a broken integration; the rest of the server works", async () => {
    const { integrations } = await json(await server.request("/api/v1/admin/integrations"))
    const broken = integrations.find((i: { id: string }) => i.id === "broken")
    expect(broken).toMatchObject({ status: "failed", parts: [] })
    expect(broken.error).toContain("handler must be a function")
    const syntax = integrations.find((i: { id: string }) => i.id === "syntax")
    expect(syntax.status).toBe("failed")
    expect(syntax.error).toContain("hooks.ts failed to load")
    expect(logs.some((line) => line.includes("Integration broken") && line.includes("was not loaded"))).toBe(true)
    expect((await server.request("/integrations/broken/x")).status).toBe(404)
  })

  it("mounts routes under /integrations/<id>/ with a scope per route", async () => {
    // Even the example's ping needs a key.
    expect((await server.request("/integrations/example/ping", { auth: null })).status).toBe(401)
    expect((await server.request("/integrations/example/ping")).status).toBe(200)
    const operator = await scopedKey(["operations:read"])
    expect((await server.request("/integrations/example/ping", { auth: operator })).status).toBe(200)
    expect((await server.request("/integrations/twice/who", { auth: null })).status).toBe(401)
    const without = await scopedKey(["chat"])
    const denied = await server.request("/integrations/twice/who", { auth: without })
    expect(denied.status).toBe(403)
    expect(await json(denied)).toEqual({ detail: "Missing required scope: bots:read" })
    const allowed = await scopedKey(["bots:read"])
    expect((await server.request("/integrations/twice/who", { auth: allowed })).status).toBe(200)
    // They are in discover and in the OpenAPI document like core routes.
    const discover = await json(await server.request("/api/v1/discover"))
    const entries = Array.isArray(discover) ? discover : discover.endpoints
    expect(entries).toEqual(
      expect.arrayContaining([expect.objectContaining({ method: "GET", path: "/integrations/twice/who", scope: "bots:read" })])
    )
    const spec = await json(await server.request("/openapi.json", { auth: null }))
    expect(spec.paths["/integrations/example/ingest"].post["x-required-scope"]).toBe("documents:write")
  })

  it("runs a shared-secret route only with its setting's value, checked before the handler", async () => {
    const hook = (query: string, headers: Record<string, string> = {}) =>
      server.request(`/integrations/relay/hook${query}`, { method: "POST", auth: null, headers, body: JSON.stringify({ n: 1 }) })
    for (
      const refused of [
        await hook(""),
        await hook("?token=wrong"),
        await hook("", { "x-relay-token": "signing-from-en" }),
        await hook("?token=signing-from-env-and-more")
      ]
    ) {
      expect(refused.status).toBe(401)
      expect(await json(refused)).toEqual({ detail: "Invalid or missing webhook token" })
    }
    // A Cairn key is no shared secret.
    expect((await server.request("/integrations/relay/hook", { method: "POST", body: "{}" })).status).toBe(401)
    for (const accepted of [await hook("?token=signing-from-env"), await hook("", { "x-relay-token": "signing-from-env" })]) {
      expect(accepted.status).toBe(200)
      expect(await json(accepted)).toEqual({ ran: true, body: { n: 1 } })
    }
    // Unchecked public routes, and a secret that is not a secret setting, keep an integration from loading.
    const { integrations } = await json(await server.request("/api/v1/admin/integrations"))
    const byId = new Map(integrations.map((i: { id: string }) => [i.id, i]))
    expect(byId.get("opendoor")).toMatchObject({ status: "failed", error: expect.stringContaining("public routes are gone") })
    expect(byId.get("plainsecret")).toMatchObject({ status: "failed", error: expect.stringContaining("declared secret: true") })
    expect((await server.request("/integrations/opendoor/hook", { method: "POST", auth: null })).status).toBe(404)
  })

  it("lists integration tools beside core tools, skips _ files, and executes them", async () => {
    const tools = await json(await server.request("/api/v1/admin/tools"))
    const names = tools.map((t: { name: string }) => t.name)
    expect(names).toEqual(expect.arrayContaining(["current_time", "example_word_count"]))
    expect(names.some((name: string) => name.includes("words"))).toBe(false)
    expect(tools.find((t: { name: string }) => t.name === "example_word_count")).toMatchObject({
      tool_name: "example_word_count",
      source: "integration:example",
      source_integration: "example"
    })
    expect(tools.find((t: { name: string }) => t.name === "current_time")).toMatchObject({ source_integration: null })
    const run = await server.request("/api/v1/admin/tools/example_word_count/execute", {
      method: "POST",
      body: JSON.stringify({ arguments: { text: "the quick brownest fox" } })
    })
    expect(run.status).toBe(200)
    const result = await json(run)
    expect(JSON.parse(result.result)).toEqual({ words: 4, longest: "brownest" })
    expect(result).toMatchObject({ is_error: false, error: null })
    expect((await server.request("/api/v1/admin/tools/nope/execute", { method: "POST", body: "{}" })).status).toBe(404)
  })

  it("syncs integration skills under integrations/<id>/<stem> and injects them", async () => {
    const bot = await server.request("/api/v1/admin/bots", {
      method: "POST",
      body: JSON.stringify({
        id: "skilled",
        name: "Skilled",
        skills: ["integrations/example/example-usage"],
        tools: ["example_word_count"]
      })
    })
    expect(bot.status).toBe(201)
    llm.script({ text: "Sure" })
    const chat = await server.request("/chat", { method: "POST", body: JSON.stringify({ message: "Count this", bot_id: "skilled" }) })
    expect(chat.status).toBe(200)
    const sent = llm.requestsTo("/v1/chat/completions").at(-1)!.body
    expect(sent.messages[0].content).toContain("Using the example integration")
    expect(sent.tools.map((t: { function: { name: string } }) => t.function.name)).toEqual(["example_word_count"])
  })

  it("lists what the console shows of each manifest: webhook, dashboard modules, HUD, setting defaults", async () => {
    const { integrations } = await json(await server.request("/api/v1/admin/integrations"))
    const byId = new Map(integrations.map((i: { id: string }) => [i.id, i]))
    expect(byId.get("example")).toMatchObject({
      webhook: null,
      hud: null,
      dashboard_modules: [{ id: "example-stats", label: "Example stats", icon: "BarChart3", description: "Responses seen" }]
    })
    expect(byId.get("msgbridge")).toMatchObject({
      webhook: { path: "/integrations/msgbridge/webhook?token=<MSGBRIDGE_WEBHOOK_TOKEN>", description: expect.stringContaining("webhook") },
      hud: { status_endpoint: "/integrations/msgbridge/hud/status" },
      dashboard_modules: [],
      // Not configured here: each required setting is named.
      status: "not_configured",
      missing_settings: ["MSGBRIDGE_SERVER_URL", "MSGBRIDGE_PASSWORD", "MSGBRIDGE_WEBHOOK_TOKEN"]
    })
    expect(byId.get("example")).toMatchObject({ status: "ready", missing_settings: [] })
    // A failed integration has no manifest to show.
    expect(byId.get("broken")).toMatchObject({ webhook: null, hud: null, dashboard_modules: [] })
    const settings = await json(await server.request("/api/v1/admin/integrations/example/settings"))
    const byKey = new Map(settings.settings.map((s: { key: string }) => [s.key, s]))
    expect(byKey.get("EXAMPLE_GREETING")).toMatchObject({ default: "Hello", required: false, description: "How the ping route greets" })
    expect(byKey.get("EXAMPLE_API_TOKEN")).toMatchObject({ default: null, secret: true })
    expect(byKey.get("EXAMPLE_SNAPSHOT_INTERVAL_MS")).toMatchObject({ default: "60000" })
  })

  it("resolves settings stored, then environment, then default, and masks secrets", async () => {
    const initial = await json(await server.request("/api/v1/admin/integrations/example/settings"))
    const byKey = (view: any) => new Map(view.settings.map((s: { key: string }) => [s.key, s]))
    expect(byKey(initial).get("EXAMPLE_GREETING")).toMatchObject({ value: "Hi from env", source: "environment" })
    expect(byKey(initial).get("EXAMPLE_API_TOKEN")).toMatchObject({ value: null, is_set: false, source: "unset", secret: true })
    expect((await json(await server.request("/integrations/example/ping"))).greeting).toBe("Hi from env")

    const saved = await server.request("/api/v1/admin/integrations/example/settings", {
      method: "PUT",
      body: JSON.stringify({ EXAMPLE_GREETING: "Howdy", EXAMPLE_API_TOKEN: "tok-secret-value-123456" })
    })
    expect(saved.status).toBe(200)
    const savedText = await saved.text()
    expect(savedText).not.toContain("tok-secret-value-123456")
    const view = JSON.parse(savedText)
    expect(byKey(view).get("EXAMPLE_API_TOKEN")).toMatchObject({ value: "****", is_set: true, source: "stored" })
    expect(byKey(view).get("EXAMPLE_GREETING")).toMatchObject({ value: "Howdy", source: "stored" })
    expect((await json(await server.request("/integrations/example/ping"))).greeting).toBe("Howdy")

    // The masked value sent back keeps the secret; the integration still reads the real one.
    const again = await server.request("/api/v1/admin/integrations/example/settings", {
      method: "PUT",
      body: JSON.stringify({ EXAMPLE_API_TOKEN: "****", EXAMPLE_GREETING: null })
    })
    const after = byKey(await json(again))
    expect(after.get("EXAMPLE_API_TOKEN")).toMatchObject({ is_set: true, source: "stored" })
    expect(after.get("EXAMPLE_GREETING")).toMatchObject({ value: "Hi from env", source: "environment" })
    // Nothing is stored in the clear.
    expect(JSON.stringify(await json(await server.request("/api/v1/admin/integrations")))).not.toContain("tok-secret")

    const unknown = await server.request("/api/v1/admin/integrations/example/settings", {
      method: "PUT",
      body: JSON.stringify({ NOPE: "x" })
    })
    expect(unknown.status).toBe(422)
    expect((await json(unknown)).detail[0].loc).toEqual(["body", "NOPE"])
    expect((await server.request("/api/v1/admin/integrations/nope/settings")).status).toBe(404)
  })

  it("refuses a value its SETUP schema cannot read, naming the setting, and stores nothing of that request", async () => {
    const path = "/api/v1/admin/integrations/example/settings"
    const wrong = await server.request(path, {
      method: "PUT",
      body: JSON.stringify({ EXAMPLE_SNAPSHOT_INTERVAL_MS: "soon", EXAMPLE_GREETING: "Not kept" })
    })
    expect(wrong.status).toBe(422)
    const body = await json(wrong)
    expect(body.detail).toEqual([
      { loc: ["body", "EXAMPLE_SNAPSHOT_INTERVAL_MS"], msg: expect.stringMatching(/^EXAMPLE_SNAPSHOT_INTERVAL_MS: /), type: "value_error" }
    ])
    const tooSmall = await server.request(path, { method: "PUT", body: JSON.stringify({ EXAMPLE_SNAPSHOT_INTERVAL_MS: "5" }) })
    expect(tooSmall.status).toBe(422)
    expect((await json(tooSmall)).detail[0].msg).toBe("EXAMPLE_SNAPSHOT_INTERVAL_MS: Expected a whole number of at least 100")
    const view = await json(await server.request(path))
    const byKey = new Map(view.settings.map((s: { key: string }) => [s.key, s]))
    expect(byKey.get("EXAMPLE_SNAPSHOT_INTERVAL_MS")).toMatchObject({ source: "default", value: "60000" })
    expect(byKey.get("EXAMPLE_GREETING")).not.toMatchObject({ value: "Not kept" })
    // A number in JSON is its text, and read as such.
    const fine = await server.request(path, { method: "PUT", body: JSON.stringify({ EXAMPLE_SNAPSHOT_INTERVAL_MS: 250 }) })
    expect(fine.status).toBe(200)
    expect(new Map((await json(fine)).settings.map((s: { key: string }) => [s.key, s])).get("EXAMPLE_SNAPSHOT_INTERVAL_MS")).toMatchObject({
      value: "250",
      source: "stored"
    })
    expect((await server.request(path, { method: "PUT", body: JSON.stringify({ EXAMPLE_SNAPSHOT_INTERVAL_MS: null }) })).status).toBe(200)
  })

  it("does not keep a masked or unsent secret when a *_URL setting changes in the same request", async () => {
    const settingsPath = "/api/v1/admin/integrations/relay/settings"
    const save = (body: Record<string, unknown>) => server.request(settingsPath, { method: "PUT", body: JSON.stringify(body) })
    const locs = async (response: Response) => {
      expect(response.status).toBe(422)
      const { detail } = await json(response)
      for (const issue of detail) {
        expect(issue).toMatchObject({ msg: expect.stringContaining("RELAY_SERVER_URL changes"), type: "value_error" })
      }
      return detail.map((issue: { loc: Array<string> }) => issue.loc.join("."))
    }
    const where = async () => json(await server.request("/integrations/relay/where"))

    // The signing key comes from the environment: a first URL without it is refused, all or nothing.
    const first = await save({ RELAY_SERVER_URL: "https://relay.example", RELAY_TOKEN: "relay-token-first-1111" })
    expect(await locs(first)).toEqual(["body.RELAY_SIGNING_KEY"])
    expect(await where()).toEqual({ url: null, token: null, signing: "signing-from-env" })
    const saved = await save({
      RELAY_SERVER_URL: "https://relay.example",
      RELAY_TOKEN: "relay-token-first-1111",
      RELAY_SIGNING_KEY: "signing-clear-2222"
    })
    expect(saved.status).toBe(200)

    // Another URL with the secrets masked, or not sent: refused, naming each secret.
    const masked = await save({ RELAY_SERVER_URL: "https://attacker.example", RELAY_TOKEN: "****", RELAY_SIGNING_KEY: "****" })
    const maskedLocs = await locs(masked.clone())
    expect(maskedLocs).toEqual(["body.RELAY_TOKEN", "body.RELAY_SIGNING_KEY"])
    expect((await json(masked)).detail[0].msg).toContain("RELAY_TOKEN was sent back masked")
    const omitted = await save({ RELAY_SERVER_URL: "https://attacker.example", RELAY_NOTE: "moved" })
    expect(await locs(omitted)).toEqual(["body.RELAY_TOKEN", "body.RELAY_SIGNING_KEY"])
    const oneClear = await save({
      RELAY_SERVER_URL: "https://attacker.example",
      RELAY_TOKEN: "****",
      RELAY_SIGNING_KEY: "signing-new-3333"
    })
    expect(await locs(oneClear)).toEqual(["body.RELAY_TOKEN"])
    // Forgetting a secret that the environment also sets still carries the environment's value.
    const forgotten = await save({ RELAY_SERVER_URL: "https://attacker.example", RELAY_TOKEN: null, RELAY_SIGNING_KEY: null })
    expect(await locs(forgotten)).toEqual(["body.RELAY_SIGNING_KEY"])
    const relayView = await json(await server.request(settingsPath))
    expect(relayView.settings.find((s: { key: string }) => s.key === "RELAY_NOTE")).toMatchObject({ value: null, source: "unset" })
    expect(await where()).toEqual({ url: "https://relay.example", token: "relay-token-first-1111", signing: "signing-clear-2222" })

    // The same URL sent again is no change: masked secrets are kept as before.
    const unchanged = await save({
      RELAY_SERVER_URL: "https://relay.example",
      RELAY_TOKEN: "****",
      RELAY_SIGNING_KEY: "****",
      RELAY_NOTE: "same"
    })
    expect(unchanged.status).toBe(200)
    expect(await where()).toEqual({ url: "https://relay.example", token: "relay-token-first-1111", signing: "signing-clear-2222" })

    // With every secret in the clear (or forgotten with nothing behind it) the URL moves.
    const moved = await save({ RELAY_SERVER_URL: "https://elsewhere.example", RELAY_TOKEN: null, RELAY_SIGNING_KEY: "signing-new-3333" })
    expect(moved.status).toBe(200)
    expect(await where()).toEqual({ url: "https://elsewhere.example", token: null, signing: "signing-new-3333" })
  })

  it("serves the sidebar sections with defaults applied", async () => {
    const { sections } = await json(await server.request("/api/v1/admin/integrations/sidebar-sections"))
    // Every bundled integration with a section has one, each with its items; these three exactly.
    for (const section of sections) expect(section).toMatchObject({ integration_id: expect.any(String), items: expect.any(Array) })
    const known = new Set(["example", "mailbox", "msgbridge"])
    expect(sections.filter((section: { integration_id: string }) => known.has(section.integration_id))).toEqual([
      {
        integration_id: "example",
        id: "example",
        title: "Example",
        icon: "Zap",
        items: [
          { label: "Ping", href: "/integrations/example/ping", icon: "Activity" },
          { label: "Stats", href: "/integrations/example/stats", icon: "Plug" }
        ],
        readiness_endpoint: "/integrations/example/ping",
        readiness_field: "status"
      },
      // The bundled mailbox integration's section.
      {
        integration_id: "mailbox",
        id: "mailbox",
        title: "Mailbox",
        icon: "MessageSquare",
        items: [
          { label: "Status", href: "/integrations/mailbox/status", icon: "Activity" },
          { label: "Quarantine", href: "/integrations/mailbox/quarantine", icon: "ShieldCheck" }
        ],
        readiness_endpoint: "/integrations/mailbox/ping",
        readiness_field: "configured"
      },
      // The bundled messaging bridge's.
      {
        integration_id: "msgbridge",
        id: "msgbridge",
        title: "Messages",
        icon: "MessageSquare",
        items: [
          { label: "Diagnose", href: "/integrations/msgbridge/diagnose", icon: "Activity" },
          { label: "Status", href: "/integrations/msgbridge/hud/status", icon: "Server" }
        ],
        readiness_endpoint: "/integrations/msgbridge/diagnose",
        readiness_field: "ready"
      }
    ])
  })

  it("runs the example integration end to end: ingest, search, hook", async () => {
    const ping = await json(await server.request("/integrations/example/ping"))
    expect(ping).toMatchObject({ status: "ok", integration: "example" })
    const ingested = await server.request("/integrations/example/ingest", {
      method: "POST",
      body: JSON.stringify({ title: "Glacier notes", content: "Cairns mark trails across glaciers and moraines." })
    })
    expect(ingested.status).toBe(201)
    const { document_id } = await json(ingested)
    const document = await json(await server.request(`/api/v1/documents/${document_id}`))
    expect(document).toMatchObject({ title: "Glacier notes", integration_id: "example" })
    const search = await json(await server.request("/api/v1/documents/search?q=glaciers&integration_id=example"))
    const hits = Array.isArray(search) ? search : (search.results ?? search.matches)
    expect(hits[0].id ?? hits[0].document_id).toBe(document_id)
    const bad = await server.request("/integrations/example/ingest", { method: "POST", body: JSON.stringify({ title: 3 }) })
    expect(bad.status).toBe(422)

    const before = (await json(await server.request("/integrations/example/stats"))).responses_seen
    llm.script({ text: "counted" })
    expect((await server.request("/chat", { method: "POST", body: JSON.stringify({ message: "hello" }) })).status).toBe(200)
    const deadline = Date.now() + 5_000
    let seen = before
    while (Date.now() < deadline && seen === before) {
      seen = (await json(await server.request("/integrations/example/stats"))).responses_seen
      await new Promise((r) => setTimeout(r, 50))
    }
    expect(seen).toBe(before + 1)
    const { integrations } = await json(await server.request("/api/v1/admin/integrations"))
    expect(integrations.find((i: { id: string }) => i.id === "example")).toMatchObject({
      name: "Example",
      version: "1.0.0",
      status: "ready",
      metadata: { integration_type: "example", client_id_prefix: "example:" }
    })
  })
})
