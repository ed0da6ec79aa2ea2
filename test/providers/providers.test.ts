/** The provider registry and the usage report over HTTP, on both databases. */
import pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type FakeLlm, startFakeLlm } from "../fixtures/fakeLlm.ts"
import { backends } from "../support/database.ts"
import { json, startServer, type TestServer } from "../support/server.ts"

const DEFAULT_KEY = "sk-default-key-000000000000"
const LOCAL_KEY = "sk-local-provider-key-ABCDEFGH1234"
const ROTATED_KEY = "sk-local-provider-key-rotated-ZZZZ9876"

const post = (server: TestServer, path: string, body: unknown) => server.request(path, { method: "POST", body: JSON.stringify(body) })
const put = (server: TestServer, path: string, body: unknown) => server.request(path, { method: "PUT", body: JSON.stringify(body) })

describe.each(backends)("LLM providers and usage (%s)", (backend) => {
  let defaultLlm: FakeLlm
  let localLlm: FakeLlm
  let server: TestServer

  beforeAll(async () => {
    defaultLlm = await startFakeLlm({ apiKey: DEFAULT_KEY })
    localLlm = await startFakeLlm({ apiKey: LOCAL_KEY, models: ["llama-local", "qwen-local"] })
    server = await startServer({
      backend,
      env: {
        OPENAI_BASE_URL: defaultLlm.url,
        OPENAI_API_KEY: DEFAULT_KEY,
        DEFAULT_MODEL: "gpt-4o-mini",
        LLM_MAX_RETRIES: "1",
        LLM_RETRY_BASE_MS: "5"
      }
    })
  })
  afterAll(async () => {
    await server?.close()
    await defaultLlm?.close()
    await localLlm?.close()
  })

  it("creates a provider with an encrypted key, shows it masked, and routes provider/model to it", async () => {
    const created = await post(server, "/api/v1/admin/providers", {
      id: "local",
      base_url: localLlm.url,
      api_key: LOCAL_KEY,
      extra_headers: { "X-Tenant": "acme", "Api-Key": "azure-style-secret-7777" },
      models: [{ id: "llama-local", input_price_per_million: 2, output_price_per_million: 8 }]
    })
    expect(created.status).toBe(201)
    const view = await json(created)
    expect(view).toEqual({
      id: "local",
      type: "openai",
      base_url: localLlm.url,
      api_key: "****1234",
      // A header that carries a credential is masked like the key.
      extra_headers: { "X-Tenant": "acme", "Api-Key": "****7777" },
      models: [{
        id: "llama-local",
        input_price_per_million: 2,
        output_price_per_million: 8,
        cache_read_price_per_million: null,
        cache_write_price_per_million: null,
        vision: null
      }],
      source: "stored",
      is_default: false
    })

    // At rest the key is ciphertext.
    if (server.db.databaseUrl) {
      const client = new pg.Client({ connectionString: server.db.databaseUrl })
      await client.connect()
      const { rows } = await client.query("SELECT api_key_encrypted, extra_headers::text AS headers FROM llm_providers WHERE id = 'local'")
      await client.end()
      expect(rows[0].api_key_encrypted).toMatch(/^v1:/)
      expect(rows[0].api_key_encrypted).not.toContain(LOCAL_KEY)
      expect(rows[0].headers).not.toContain("azure-style-secret")
    }

    localLlm.script({ text: "local answer" })
    const reply = await post(server, "/api/v1/llm/completions", { model: "local/llama-local", messages: [{ role: "user", content: "hi" }] })
    expect(reply.status).toBe(200)
    expect(await json(reply)).toMatchObject({ content: "local answer", model: "local/llama-local" })
    const [sent] = localLlm.requestsTo("/v1/chat/completions")
    expect(sent!.headers.authorization).toBe(`Bearer ${LOCAL_KEY}`)
    expect(sent!.headers["x-tenant"]).toBe("acme")
    expect(sent!.headers["api-key"]).toBe("azure-style-secret-7777")
    expect(sent!.body.model).toBe("llama-local")
  })

  it("keeps the stored key when the masked value comes back, and replaces it when a new one does", async () => {
    const current = await json(await server.request("/api/v1/admin/providers/local"))
    const kept = await put(server, "/api/v1/admin/providers/local", { ...current, models: [] })
    expect(kept.status).toBe(200)
    expect((await json(kept)).api_key).toBe("****1234")
    localLlm.reset()
    const stillWorks = await post(server, "/api/v1/llm/completions", {
      model: "local/llama-local",
      messages: [{ role: "user", content: "hi" }]
    })
    expect(stillWorks.status).toBe(200)
    expect(localLlm.requests[0]!.headers.authorization).toBe(`Bearer ${LOCAL_KEY}`)
    expect(localLlm.requests[0]!.headers["api-key"]).toBe("azure-style-secret-7777")

    const rotated = await put(server, "/api/v1/admin/providers/local", { base_url: localLlm.url, api_key: ROTATED_KEY })
    expect((await json(rotated)).api_key).toBe("****9876")
    localLlm.reset()
    // The fake only accepts the old key: the provider's 401 is a 502 here, without either key.
    const rejected = await post(server, "/api/v1/llm/completions", {
      model: "local/llama-local",
      messages: [{ role: "user", content: "hi" }]
    })
    expect(rejected.status).toBe(502)
    const text = await rejected.text()
    expect(text).not.toContain(ROTATED_KEY)
    expect(localLlm.requests[0]!.headers.authorization).toBe(`Bearer ${ROTATED_KEY}`)

    const restored = await put(server, "/api/v1/admin/providers/local", {
      base_url: localLlm.url,
      api_key: LOCAL_KEY,
      models: [{ id: "llama-local", input_price_per_million: 2, output_price_per_million: 8 }]
    })
    expect(restored.status).toBe(200)
  })

  it("does not carry a stored key or credential header to a base_url on another origin", async () => {
    const elsewhere = await startFakeLlm()
    try {
      const withHeaders = await put(server, "/api/v1/admin/providers/local", {
        base_url: localLlm.url,
        api_key: LOCAL_KEY,
        extra_headers: { "X-Tenant": "acme", "Api-Key": "azure-style-secret-7777" },
        models: [{ id: "llama-local", input_price_per_million: 2, output_price_per_million: 8 }]
      })
      expect(withHeaders.status).toBe(200)
      const current = await json(await server.request("/api/v1/admin/providers/local"))
      expect(current.api_key).toBe("****1234")

      // Key omitted, then sent back masked with the masked header: refused, naming each credential.
      const omitted = await put(server, "/api/v1/admin/providers/local", { base_url: elsewhere.url })
      expect(omitted.status).toBe(422)
      const omittedBody = await json(omitted)
      expect(omittedBody.detail).toEqual([{
        loc: ["body", "api_key"],
        msg: expect.stringContaining("another origin"),
        type: "value_error"
      }])
      expect(omittedBody.detail[0].msg).toContain("api_key")
      const masked = await put(server, "/api/v1/admin/providers/local", { ...current, base_url: elsewhere.url })
      expect(masked.status).toBe(422)
      expect((await json(masked)).detail.map((i: { loc: Array<string> }) => i.loc)).toEqual([
        ["body", "api_key"],
        ["body", "extra_headers", "Api-Key"]
      ])
      // A clear key with the header still masked: only the header is refused.
      const headerOnly = await put(server, "/api/v1/admin/providers/local", {
        ...current,
        base_url: elsewhere.url,
        api_key: "sk-fresh-key-for-elsewhere-0000"
      })
      expect(headerOnly.status).toBe(422)
      expect((await json(headerOnly)).detail.map((i: { loc: Array<string> }) => i.loc)).toEqual([["body", "extra_headers", "Api-Key"]])

      // Nothing changed, and nothing reaches the other server.
      expect(await json(await server.request("/api/v1/admin/providers/local"))).toEqual(current)
      const models = await json(await server.request("/api/v1/admin/providers/local/models"))
      expect(models.upstream_error).toBeNull()
      expect(elsewhere.requests).toEqual([])
      expect(localLlm.requestsTo("/v1/models").at(-1)!.headers.authorization).toBe(`Bearer ${LOCAL_KEY}`)

      // The same origin with another path keeps the masked key and header, as before.
      const sameOrigin = await put(server, "/api/v1/admin/providers/local", {
        ...current,
        base_url: `${new URL(localLlm.url).origin}/other`
      })
      expect(sameOrigin.status).toBe(200)
      expect(await json(sameOrigin)).toMatchObject({ api_key: "****1234", extra_headers: { "Api-Key": "****7777" } })
      const back = await put(server, "/api/v1/admin/providers/local", current)
      expect(back.status).toBe(200)
      localLlm.reset()
      await server.request("/api/v1/admin/providers/local/models")
      expect(localLlm.requestsTo("/v1/models")[0]!.headers.authorization).toBe(`Bearer ${LOCAL_KEY}`)
      expect(localLlm.requestsTo("/v1/models")[0]!.headers["api-key"]).toBe("azure-style-secret-7777")

      // Sent again in the clear, the new origin gets exactly what was sent; null drops the key.
      const moved = await put(server, "/api/v1/admin/providers/local", {
        base_url: elsewhere.url,
        api_key: "sk-fresh-key-for-elsewhere-0000",
        extra_headers: { "X-Tenant": "acme" }
      })
      expect(moved.status).toBe(200)
      expect(await json(moved)).toMatchObject({ base_url: elsewhere.url, api_key: "****0000", extra_headers: { "X-Tenant": "acme" } })
      await server.request("/api/v1/admin/providers/local/models")
      const [listed] = elsewhere.requestsTo("/v1/models")
      expect(listed!.headers.authorization).toBe("Bearer sk-fresh-key-for-elsewhere-0000")
      expect(listed!.headers["api-key"]).toBeUndefined()
      const keyless = await put(server, "/api/v1/admin/providers/local", { base_url: localLlm.url, api_key: null })
      expect(keyless.status).toBe(200)
      expect((await json(keyless)).api_key).toBeNull()
    } finally {
      await elsewhere.close()
      const restored = await put(server, "/api/v1/admin/providers/local", {
        base_url: localLlm.url,
        api_key: LOCAL_KEY,
        models: [{ id: "llama-local", input_price_per_million: 2, output_price_per_million: 8 }]
      })
      expect(restored.status).toBe(200)
    }
  })

  it("lists providers and their models with prices, configured and upstream", async () => {
    const list = await json(await server.request("/api/v1/admin/providers"))
    expect(list.providers.map((p: { id: string }) => p.id)).toEqual(["default", "local"])
    expect(JSON.stringify(list)).not.toContain(LOCAL_KEY)
    expect(JSON.stringify(list)).not.toContain(DEFAULT_KEY)

    const models = await json(await server.request("/api/v1/admin/providers/local/models"))
    expect(models).toEqual({
      provider_id: "local",
      upstream_error: null,
      models: [
        {
          id: "local/llama-local",
          model: "llama-local",
          input_price_per_million: 2,
          output_price_per_million: 8,
          sources: ["configured", "upstream"]
        },
        {
          id: "local/qwen-local",
          model: "qwen-local",
          input_price_per_million: null,
          output_price_per_million: null,
          sources: ["upstream"]
        }
      ]
    })
    const defaults = await json(await server.request("/api/v1/admin/providers/default/models"))
    expect(defaults.models.find((m: { id: string }) => m.id === "fake-model")).toMatchObject({ sources: ["upstream"] })
  })

  it("rejects bad provider input, duplicates and changes to the default provider", async () => {
    const bad = await post(server, "/api/v1/admin/providers", { id: "Has/Slash", base_url: "ftp://x", models: [{ id: "" }] })
    expect(bad.status).toBe(422)
    const locs = (await json(bad)).detail.map((i: { loc: Array<unknown> }) => i.loc.join("."))
    expect(locs).toEqual(expect.arrayContaining(["body.id", "body.base_url", "body.models.0.id"]))
    const duplicate = await post(server, "/api/v1/admin/providers", { id: "local", base_url: localLlm.url })
    expect(duplicate.status).toBe(409)
    const defaultChange = await put(server, "/api/v1/admin/providers/default", { base_url: localLlm.url })
    expect(defaultChange.status).toBe(409)
    const missing = await put(server, "/api/v1/admin/providers/nope", { base_url: localLlm.url })
    expect(missing.status).toBe(404)
    // Credentials in the URL would be shown in every answer: they belong in api_key or extra_headers.
    const inUrl = await post(server, "/api/v1/admin/providers", { id: "creds", base_url: "http://user:s3cret@127.0.0.1:9/v1" })
    expect(inUrl.status).toBe(422)
    expect((await json(inUrl)).detail).toEqual([
      expect.objectContaining({ loc: ["body", "base_url"], msg: "Put credentials in api_key or extra_headers, not in the URL" })
    ])
    // A line break in a key or header would break (or split) every request made with it: refused, nothing stored.
    const broken = await post(server, "/api/v1/admin/providers", {
      id: "crlf",
      base_url: localLlm.url,
      api_key: "sk-abc\r\nX-Injected: 1",
      extra_headers: { "X-Team": "a\nb" }
    })
    expect(broken.status).toBe(422)
    expect((await json(broken)).detail.map((i: { loc: Array<unknown> }) => i.loc.join("."))).toEqual(
      expect.arrayContaining(["body.api_key", "body.extra_headers.X-Team"])
    )
    expect((await server.request("/api/v1/admin/providers/crlf")).status).toBe(404)
    const after = await json(await server.request("/api/v1/admin/providers/local"))
    expect(after.base_url).toBe(localLlm.url)
  })

  it("records usage with the cost from the provider's prices and the shipped table", async () => {
    const from = new Date(Date.now() - 60_000).toISOString()
    const billing = await post(server, "/api/v1/admin/providers", {
      id: "billing",
      base_url: localLlm.url,
      api_key: LOCAL_KEY,
      models: [{ id: "metered", input_price_per_million: 2, output_price_per_million: 8 }]
    })
    expect(billing.status).toBe(201)
    localLlm.reset()
    localLlm.script({ text: "priced", usage: { prompt_tokens: 1000, completion_tokens: 500, total_tokens: 1500 } })
    defaultLlm.script({ text: "shipped", usage: { prompt_tokens: 2_000_000, completion_tokens: 1_000_000, total_tokens: 3_000_000 } })
    defaultLlm.script({ text: "unpriced", usage: { prompt_tokens: 10, completion_tokens: 10, total_tokens: 20 } })
    const messages = [{ role: "user", content: "hi" }]
    expect((await post(server, "/api/v1/llm/completions", { model: "billing/metered", messages })).status).toBe(200)
    expect((await post(server, "/api/v1/llm/completions", { messages })).status).toBe(200) // DEFAULT_MODEL gpt-4o-mini
    expect((await post(server, "/api/v1/llm/completions", { model: "some-unpriced-model", messages })).status).toBe(200)

    const report = await json(await server.request(`/api/v1/admin/usage?from=${encodeURIComponent(from)}`))
    const byModel = (model: string) => report.by_model.find((row: { model: string }) => row.model === model)
    // billing/metered: 1000 × $2/M + 500 × $8/M
    expect(byModel("metered")).toMatchObject({ provider_id: "billing", calls: 1, prompt_tokens: 1000, completion_tokens: 500 })
    expect(byModel("metered").cost_usd).toBeCloseTo(0.006, 10)
    // gpt-4o-mini, shipped $0.15/M in and $0.60/M out: 2M × 0.15 + 1M × 0.60
    expect(byModel("gpt-4o-mini")).toMatchObject({ provider_id: "default", calls: 1, errors: 0 })
    expect(byModel("gpt-4o-mini").cost_usd).toBeCloseTo(0.9, 10)
    expect(byModel("some-unpriced-model")).toMatchObject({ cost_usd: 0, unpriced_calls: 1 })
    // The earlier tests' calls (one rejected by the provider) are in the range too.
    expect(byModel("llama-local").errors).toBeGreaterThanOrEqual(1)
    expect(report.by_key).toEqual([expect.objectContaining({ principal_kind: "static_key", principal_id: "" })])
    expect(report.by_bot).toEqual([expect.objectContaining({ bot_id: null })])
    expect(report.by_day).toEqual([expect.objectContaining({ day: new Date().toISOString().slice(0, 10) })])
    expect(report.totals.calls).toBe(report.by_model.reduce((n: number, row: { calls: number }) => n + row.calls, 0))
    expect(report.totals.cost_usd).toBeCloseTo(report.by_model.reduce((n: number, row: { cost_usd: number }) => n + row.cost_usd, 0), 10)

    const empty = await json(await server.request("/api/v1/admin/usage?from=2001-01-01T00:00:00Z&to=2001-01-02T00:00:00Z"))
    expect(empty.totals).toMatchObject({ calls: 0, cost_usd: 0 })
    const invalid = await server.request("/api/v1/admin/usage?from=yesterday")
    expect(invalid.status).toBe(422)
    expect((await json(invalid)).detail[0].loc).toEqual(["query", "from"])
  })

  it("deletes a provider; its models then go nowhere special", async () => {
    const deleted = await server.request("/api/v1/admin/providers/local", { method: "DELETE" })
    expect(deleted.status).toBe(204)
    expect((await server.request("/api/v1/admin/providers/local")).status).toBe(404)
    expect((await server.request("/api/v1/admin/providers/local", { method: "DELETE" })).status).toBe(404)
    expect((await server.request("/api/v1/admin/providers/default", { method: "DELETE" })).status).toBe(409)
  })
})
