/** Helpers for the document tests: ingest and search through the typed client, ids by corpus key. */
import type { DocumentCreate, SearchInput } from "../../src/documents/Model.ts"
import type { ClientCalls } from "../support/client.ts"
import type { CorpusDocument } from "./corpus.ts"

/** Stores a document; the typed call succeeds only on the declared 201. */
export const ingest = (server: Pick<ClientCalls, "call">, body: DocumentCreate) =>
  server.call((client) => client.documents.create({ payload: body }))

/** Ingests the corpus under one integration; answers id → corpus key. */
export const ingestCorpus = async (
  server: Pick<ClientCalls, "call">,
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

export const search = (server: Pick<ClientCalls, "call">, params: SearchInput) =>
  server.call((client) => client.documents.search({ urlParams: params }))
