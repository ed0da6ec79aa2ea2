/** Helpers for the document tests: ingest through the API, search, read ids back by corpus key. */
import { expect } from "vitest"
import { json, type TestServer } from "../support/server.ts"
import type { CorpusDocument } from "./corpus.ts"

export const ingest = async (
  server: Pick<TestServer, "request">,
  body: Record<string, unknown>
): Promise<{ id: string; chunk_count: number } & Record<string, unknown>> => {
  const response = await server.request("/api/v1/documents", { method: "POST", body: JSON.stringify(body) })
  const payload = await json(response)
  expect(response.status, JSON.stringify(payload)).toBe(201)
  return payload
}

/** Ingests the corpus under one integration; answers id → corpus key. */
export const ingestCorpus = async (
  server: Pick<TestServer, "request">,
  documents: ReadonlyArray<CorpusDocument>,
  integrationId: string
): Promise<Map<string, string>> => {
  const keys = new Map<string, string>()
  for (const document of documents) {
    const created = await ingest(server, {
      title: document.title,
      content: document.content,
      integration_id: integrationId,
      metadata: { key: document.key }
    })
    keys.set(created.id, document.key)
  }
  return keys
}

export interface Hit {
  readonly id: string
  readonly title: string
  readonly score: number
  readonly similarity: number | null
  readonly snippet: string
  readonly integration_id: string
  readonly metadata: Record<string, unknown>
}

export const search = async (
  server: Pick<TestServer, "request">,
  params: Record<string, string | number>
): Promise<Array<Hit>> => {
  const query = new URLSearchParams(Object.entries(params).map(([k, v]): [string, string] => [k, String(v)]))
  const response = await server.request(`/api/v1/documents/search?${query}`)
  const payload = await json(response)
  expect(response.status, JSON.stringify(payload)).toBe(200)
  return payload
}
