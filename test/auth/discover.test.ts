/**
 * Every endpoint enforces the scope it declares. The walk is driven by the admin's discover list, so
 * it covers routes added later (integrations included) without being edited.
 */
import { Schema } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { allScopes, presets, scopeGroups, ScopeName } from "../../src/auth/Scopes.ts"
import { backends } from "../support/database.ts"
import { json, startServer, type TestServer } from "../support/server.ts"
import { createKey } from "./helpers.ts"

interface Entry {
  readonly method: string
  readonly path: string
  readonly description: string
  readonly scope: string
}

const dummyId = "00000000-0000-4000-8000-000000000000"
const fill = (path: string) => path.replace(/:\w+/g, dummyId)

describe.each(backends)("discover and scope enforcement (%s)", (backend) => {
  let server: TestServer
  let entries: ReadonlyArray<Entry>
  beforeAll(async () => {
    server = await startServer({ backend })
    const response = await server.request("/api/v1/discover")
    expect(response.status).toBe(200)
    entries = await json(response)
  })
  afterAll(async () => {
    await server?.close()
  })

  const call = (entry: Entry, auth: string | null) =>
    server.request(fill(entry.path), {
      method: entry.method,
      auth,
      ...(entry.method === "GET" || entry.method === "HEAD" ? {} : { body: "{}" })
    })

  it("lists every endpoint for the static key, each with method, path, description and scope", () => {
    expect(entries.length).toBeGreaterThan(10)
    for (const entry of entries) {
      expect(Object.keys(entry).sort()).toEqual(["description", "method", "path", "scope"])
      expect(entry.description.length).toBeGreaterThan(0)
      expect(["public", "authenticated", ...allScopes]).toContain(entry.scope)
    }
    const paths = entries.map((e) => `${e.method} ${e.path}`)
    expect(paths).toContain("GET /api/v1/discover")
    expect(paths).toContain("POST /api/v1/admin/api-keys")
    expect(paths).toContain("POST /api/v1/widget-auth/mint")
  })

  it("walks every endpoint: 401 without credentials, 403 without the scope, neither with exactly it", async () => {
    const empty = await createKey(server, [])
    const exact = new Map<string, string>()
    const failures: Array<string> = []
    for (const entry of entries) {
      const where = `${entry.method} ${entry.path} (${entry.scope})`
      const anonymous = await call(entry, null)
      if (entry.scope === "public") {
        // A public webhook may check a token of its own (the messaging bridge's ?token=): its 401
        // must say so; a 401 or 403 for anything else is a public route that is not.
        const ownToken = anonymous.status === 401 &&
          /token/i.test(String(((await anonymous.clone().json().catch(() => ({}))) as { detail?: unknown }).detail ?? ""))
        if ((anonymous.status === 401 && !ownToken) || anonymous.status === 403) failures.push(`${where}: public but ${anonymous.status}`)
      } else if (anonymous.status !== 401) {
        failures.push(`${where}: no credentials gave ${anonymous.status}`)
      }
      await anonymous.body?.cancel()
      const unscoped = await call(entry, empty.key)
      const needsScope = entry.scope !== "public" && entry.scope !== "authenticated"
      if (needsScope && unscoped.status !== 403) failures.push(`${where}: scopeless key gave ${unscoped.status}`)
      if (
        !needsScope && (unscoped.status === 401 || unscoped.status === 403) &&
        !(entry.scope === "public" && unscoped.status === anonymous.status)
      ) {
        failures.push(`${where}: scopeless key gave ${unscoped.status}`)
      }
      if (needsScope && unscoped.status === 403) {
        const message = `Missing required scope: ${entry.scope}`
        // The OpenAI-compatible surface says it in OpenAI's error shape.
        expect(await json(unscoped)).toEqual(
          entry.path.startsWith("/v1/")
            ? { error: { message, type: "invalid_request_error", param: null, code: "insufficient_permissions" } }
            : { detail: message }
        )
      } else {
        await unscoped.body?.cancel()
      }
      if (needsScope) {
        if (!exact.has(entry.scope)) {
          exact.set(entry.scope, (await createKey(server, [Schema.decodeUnknownSync(ScopeName)(entry.scope)])).key)
        }
        const scoped = await call(entry, exact.get(entry.scope)!)
        if (scoped.status === 401 || scoped.status === 403) failures.push(`${where}: exact-scope key gave ${scoped.status}`)
        await scoped.body?.cancel()
      }
    }
    expect(failures).toEqual([])
  })

  it("lists only what a key may use, and a markdown reference with detail=true", async () => {
    const { key } = await createKey(server, ["settings:read"])
    const mine: ReadonlyArray<Entry> = await json(await server.request("/api/v1/discover", { auth: key }))
    expect(mine.every((e) => ["public", "authenticated", "settings:read"].includes(e.scope))).toBe(true)
    expect(mine.map((e) => `${e.method} ${e.path}`)).toContain("GET /api/v1/admin/settings")
    expect(mine.map((e) => `${e.method} ${e.path}`)).not.toContain("PUT /api/v1/admin/settings")
    expect(mine.length).toBeLessThan(entries.length)

    const detail = await server.request("/api/v1/discover?detail=true", { auth: key })
    expect(detail.status).toBe(200)
    expect(detail.headers.get("content-type")).toContain("text/markdown")
    const markdown = await detail.text()
    expect(markdown).toContain("## GET /api/v1/admin/settings")
    expect(markdown).toContain("- Scope: `settings:read`")
    expect(markdown).toContain("## SettingsList")
    expect(markdown).not.toContain("## PUT /api/v1/admin/settings")

    const full = await (await server.request("/api/v1/discover?detail=true")).text()
    for (const entry of entries) expect(full).toContain(`## ${entry.method} ${entry.path}`)
    expect(full).toContain("Request body (application/json)")

    const bad = await server.request("/api/v1/discover?detail=maybe", { auth: key })
    expect(bad.status).toBe(422)
    expect((await json(bad)).detail[0].loc).toEqual(["query", "detail"])
  })

  it("serves the scope catalogue with groups, descriptions, implications and the five presets", async () => {
    const { key } = await createKey(server, [])
    const response = await server.request("/api/v1/scopes", { auth: key })
    expect(response.status).toBe(200)
    const catalogue = await json(response)
    expect(catalogue.groups.length).toBe(scopeGroups.length)
    const names = catalogue.groups.flatMap((g: { scopes: Array<{ name: string }> }) => g.scopes.map((s) => s.name))
    expect(names).toEqual(allScopes)
    // The spec's table: 51 scopes in 23 rows (its heading says 22 groups; the table is the list),
    // and the approvals group the companion clients need (approvals:read, approvals:write).
    expect(names.length).toBe(53)
    expect(catalogue.groups.length).toBe(24)
    for (const group of catalogue.groups) for (const scope of group.scopes) expect(scope.description.length).toBeGreaterThan(0)
    expect(catalogue.presets.map((p: { name: string }) => p.name)).toEqual([
      "Messaging Integration",
      "Chat Client",
      "Container Bot",
      "Read-Only Monitor",
      "Mission Control"
    ])
    expect(catalogue.presets).toEqual(presets.map((p) => ({ ...p, scopes: [...p.scopes] })))
    const channelsWrite = catalogue.implications.find((i: { scope: string }) => i.scope === "channels:write")
    expect(channelsWrite.implies.sort()).toEqual(allScopes.filter((s) => /^channels\..*:write$/.test(s)).sort())
  })

  it("backs every scope of the catalogue with at least one endpoint, each listing its routes", async () => {
    const { key } = await createKey(server, [])
    const catalogue = await json(await server.request("/api/v1/scopes", { auth: key }))
    const listed = new Set(entries.map((e) => `${e.method} ${e.path}`))
    const unbacked: Array<string> = []
    for (const group of catalogue.groups) {
      for (const scope of group.scopes as Array<{ name: string; routes: Array<string> }>) {
        if (scope.routes.length === 0) unbacked.push(scope.name)
        for (const route of scope.routes) expect(listed).toContain(route)
      }
    }
    expect(unbacked).toEqual([])
    const byName = new Map(catalogue.groups.flatMap((g: { scopes: Array<{ name: string }> }) => g.scopes.map((s) => [s.name, s])))
    const knowledge = byName.get("knowledge:read") as { routes: Array<string>; deprecated_for: string }
    expect(knowledge.deprecated_for).toBe("documents:read")
    expect(knowledge.routes).toEqual((byName.get("documents:read") as { routes: Array<string> }).routes)
    expect(knowledge.routes).toContain("GET /api/v1/documents/search")
  })

  it("knowledge scopes (deprecated) reach the document routes with a Deprecation header", async () => {
    const knowledgeRead = await createKey(server, ["knowledge:read"])
    const old = await server.request("/api/v1/documents/search?q=old", { auth: knowledgeRead.key })
    expect(old.status).toBe(200)
    expect(old.headers.get("deprecation")).toMatch(/^@\d+$/)
    expect(old.headers.get("link")).toContain("rel=\"deprecation\"")
    const refused = await server.request("/api/v1/documents", {
      method: "POST",
      auth: knowledgeRead.key,
      body: JSON.stringify({ title: "t", content: "c" })
    })
    expect(refused.status).toBe(403)
    const knowledgeWrite = await createKey(server, ["knowledge:write"])
    const created = await server.request("/api/v1/documents", {
      method: "POST",
      auth: knowledgeWrite.key,
      body: JSON.stringify({ title: "Old client", content: "Written under knowledge:write", integration_id: "legacy" })
    })
    expect(created.status).toBeLessThan(300)
    expect(created.headers.get("deprecation")).not.toBeNull()
    const current = await createKey(server, ["documents:read"])
    const now = await server.request("/api/v1/documents/search?q=old", { auth: current.key })
    expect(now.status).toBe(200)
    expect(now.headers.get("deprecation")).toBeNull()
  })

  it("channels:write grants every channels.*:write scope", async () => {
    const { key } = await createKey(server, ["channels:write"])
    const me = await json(await server.request("/auth/me", { auth: key }))
    expect(me.kind).toBe("scoped_key")
    expect(me.scopes).toEqual(
      expect.arrayContaining([
        "channels.messages:write",
        "channels.config:write",
        "channels.heartbeat:write",
        "channels.integrations:write"
      ])
    )
    expect(me.scopes).not.toContain("channels.messages:read")
  })
})
