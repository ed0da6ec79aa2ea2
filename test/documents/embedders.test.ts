/**
 * The embedding backends end to end, on both databases: the provider registry's `/v1/embeddings`
 * (against the fake OpenAI-compatible server), a provider failure, the local ONNX encoder
 * downloaded at first start from a loopback server, and a change of model re-embedding stored
 * documents in the background while full-text search keeps answering.
 */
import * as fs from "node:fs"
import * as http from "node:http"
import * as path from "node:path"
import pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { eventually } from "../auth/helpers.ts"
import { cosine, fakeEmbedding, type FakeLlm, startFakeLlm } from "../fixtures/fakeLlm.ts"
import { adminUrl, backends, createTestDatabase } from "../support/database.ts"
import { json, startServer } from "../support/server.ts"
import { scaled } from "../support/time.ts"
import { ingest, search } from "./helpers.ts"
import { buildTinyEncoder } from "./tinyOnnx.ts"

/** Serves the tiny encoder as a model repository would (`/onnx/model.onnx`, `/vocab.txt`). */
const startModelHost = async () => {
  // Three topics on three axes; words outside the vocabulary become [UNK] and count for little.
  const words = ["cat", "kitten", "puppy", "dog", "truck", "engine", "car", "bread", "flour", "oven", "##s"]
  const axis = (i: number, w = 1) => [0, 1, 2].map((j) => (j === i ? w : 0.05))
  const vectors = [axis(0), axis(0, 0.9), axis(0, 0.8), axis(0), axis(1), axis(1, 0.9), axis(1), axis(2), axis(2, 0.9), axis(2), [0, 0, 0]]
  const files = buildTinyEncoder(words, vectors)
  const hits: Array<string> = []
  const server = http.createServer((req, res) => {
    hits.push(req.url ?? "")
    if (req.url === "/repo/onnx/model.onnx") return res.end(Buffer.from(files.model))
    if (req.url === "/repo/vocab.txt") return res.end(files.vocab)
    res.statusCode = 404
    res.end("not found")
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const port = (server.address() as { port: number }).port
  return {
    url: `http://127.0.0.1:${port}/repo`,
    hits,
    close: () => new Promise<void>((resolve) => server.close(() => resolve()))
  }
}

describe.each(backends)("embedding backends (%s)", (backend) => {
  let llm: FakeLlm
  beforeAll(async () => {
    llm = await startFakeLlm({ embeddingDimension: 48 })
  })
  afterAll(async () => {
    await llm?.close()
  })

  it("embeds through the provider registry's /v1/embeddings", async () => {
    const server = await startServer({
      backend,
      env: { OPENAI_BASE_URL: llm.url, OPENAI_API_KEY: "sk-test-embeddings", EMBEDDING_MODEL: "fake-embedding" }
    })
    try {
      llm.reset()
      const title = "Harbour report"
      const content = "The ferry to the island leaves the harbour at noon."
      const created = await ingest(server, { title, content, integration_id: "fake" })
      const calls = llm.requestsTo("/v1/embeddings")
      expect(calls.length).toBe(1)
      expect(calls[0]!.body).toMatchObject({ model: "fake-embedding", input: [`${title}\n${content}`] })
      expect(calls[0]!.headers["authorization"]).toBe("Bearer sk-test-embeddings")
      const other = await ingest(server, { title: "Bakery", content: "Rye bread and butter.", integration_id: "fake" })

      const q = "when does the ferry leave"
      const hits = await search(server, { q, integration_id: "fake" })
      expect(hits.map((hit) => hit.id)).toEqual([created.id, other.id])
      // The similarity is the cosine of the fake's own vectors: the stored ones were used.
      expect(hits[0]!.similarity).toBeCloseTo(cosine(fakeEmbedding(q, 48), fakeEmbedding(`${title}\n${content}`, 48)), 5)
      expect(llm.requestsTo("/v1/embeddings").at(-1)!.body).toMatchObject({ input: [q] })
    } finally {
      await server.close()
    }
  })

  it("answers 502 and stores nothing when the provider fails; search falls back to full text", async () => {
    const server = await startServer({
      backend,
      env: {
        OPENAI_BASE_URL: llm.url,
        OPENAI_API_KEY: "sk-test-embeddings",
        EMBEDDING_MODEL: "fake-embedding",
        LLM_MAX_RETRIES: "0"
      }
    })
    try {
      const kept = await ingest(server, { title: "Lighthouse", content: "The lighthouse lamp turns all night.", integration_id: "fail" })
      llm.reset()
      llm.scriptEmbeddings({ status: 500 })
      const response = await server.request("/api/v1/documents", {
        method: "POST",
        body: JSON.stringify({ title: "Lost", content: "The lighthouse keeper's diary.", integration_id: "fail" })
      })
      expect(response.status).toBe(502)
      const body = await json(response)
      expect(body.detail).toMatch(/^Embedding failed: /)
      expect(JSON.stringify(body)).not.toContain("sk-test-embeddings")
      llm.scriptEmbeddings({ status: 500 })
      const hits = await search(server, { q: "lighthouse", integration_id: "fail" })
      expect(hits.map((hit) => hit.id)).toEqual([kept.id])
      expect(hits[0]!.similarity).toBeNull()
    } finally {
      await server.close()
    }
  })

  it("downloads the ONNX encoder once, and re-embeds stored documents after a model change", async () => {
    const host = await startModelHost()
    const db = await createTestDatabase(backend, { migrated: true })
    try {
      // 1. The offline default stores three documents.
      const first = await startServer({ backend, db })
      const ids: Record<string, string> = {}
      try {
        for (
          const [key, title, content] of [
            ["pets", "Pets", "The kitten and the puppy sleep by the oven door"],
            ["vehicles", "Vehicles", "A truck engine and a car engine"],
            ["baking", "Baking", "Flour, bread and a hot oven"]
          ] as const
        ) {
          ids[key] = (await ingest(first, { title, content, integration_id: "switch" })).id
        }
      } finally {
        await first.close()
      }
      expect(host.hits).toEqual([])

      // 2. A new model: downloaded at startup, then the stored chunks are re-embedded in the background.
      const env = { EMBEDDING_MODEL: "onnx/tiny", EMBEDDING_LOCAL_URL: host.url }
      const second = await startServer({ backend, db, env })
      try {
        expect(host.hits.sort()).toEqual(["/repo/onnx/model.onnx", "/repo/vocab.txt"])
        const models = path.join(db.dataDir, "models", "tiny")
        expect(fs.readdirSync(models).sort()).toEqual(["model.onnx", "vocab.txt"])
        // Full text answers throughout.
        const byText = await search(second, { q: "truck", integration_id: "switch" })
        expect(byText[0]!.id).toBe(ids.vehicles)
        // Once every chunk carries the new model's vector, every hit has a similarity.
        await eventually(async () => {
          const hits = await search(second, { q: "cat", integration_id: "switch" })
          return hits.length === 3 && hits.every((hit) => hit.similarity !== null)
        }, 30_000)
        // "cat" appears in no document: only the new model's vectors can put the pets first.
        const hits = await search(second, { q: "cat", integration_id: "switch" })
        expect(hits[0]!.id).toBe(ids.pets)
        expect(hits[0]!.similarity!).toBeGreaterThan(hits[1]!.similarity!)
        // New documents use the new model straight away.
        const fresh = await ingest(second, { title: "Garage", content: "car and truck", integration_id: "switch" })
        const vehicles = await search(second, { q: "engine", integration_id: "switch", limit: 2 })
        expect(vehicles.map((hit) => hit.id).sort()).toEqual([ids.vehicles, fresh.id].sort())
      } finally {
        await second.close()
      }

      // 3. A restart finds the model on disk and fetches nothing.
      const third = await startServer({ backend, db, env })
      try {
        expect(host.hits.length).toBe(2)
        expect((await search(third, { q: "kitten", integration_id: "switch" }))[0]!.id).toBe(ids.pets)
      } finally {
        await third.close()
      }
    } finally {
      await host.close()
      await db.drop()
    }
    // A deadline for a heavy test: three servers booted in turn, each embedding the documents again.
  }, scaled(150_000))

  it("fails startup clearly when the model cannot be downloaded", async () => {
    const host = await startModelHost()
    await host.close()
    await expect(
      startServer({ backend, env: { EMBEDDING_MODEL: "onnx/tiny", EMBEDDING_LOCAL_URL: host.url } })
    ).rejects.toThrow(/EMBEDDING_MODEL onnx\/tiny: Cannot download http:\/\/127\.0\.0\.1:\d+\/repo\/vocab\.txt/)
  })
})

describe("vector search without pgvector", () => {
  it("is logged once at startup on a PostgreSQL server that lacks the extension", async () => {
    const client = new pg.Client({ connectionString: adminUrl })
    await client.connect()
    const available = (await client.query("SELECT 1 FROM pg_available_extensions WHERE name = 'vector'")).rowCount! > 0
    await client.end()
    const lines: Array<string> = []
    const server = await startServer({ backend: "postgres", onLog: (line) => lines.push(line) })
    try {
      await ingest(server, { title: "t", content: "some words", integration_id: "log" })
      await search(server, { q: "words" })
      await search(server, { q: "more words" })
    } finally {
      await server.close()
    }
    const notices = lines.filter((line) => line.includes("pgvector is not installed"))
    expect(notices.length).toBe(available ? 0 : 1)
  })
})
