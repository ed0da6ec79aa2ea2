/**
 * Listing documents on both backends: newest first without their content, filtered by integration,
 * paged by offset, and a bad page parameter is a 422 naming it.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { backends } from "../support/database.ts"
import { json, startServer, type TestServer } from "../support/server.ts"
import { ingest } from "./helpers.ts"

describe.each(backends)("document list (%s)", (backend) => {
  let server: TestServer
  beforeAll(async () => {
    server = await startServer({ backend })
  })
  afterAll(async () => {
    await server?.close()
  })

  it("lists documents newest first, by integration, a page at a time", async () => {
    const made: Array<string> = []
    for (const [title, integration] of [["Harbour tides", "alpha"], ["Lighthouse rota", "beta"], ["Net mending", "alpha"]] as const) {
      made.push(
        (await ingest(server, { title, content: `${title}: notes on the ${title.toLowerCase()}.`, integration_id: integration })).id
      )
    }
    const all = await server.call((client) => client.documents.list({ urlParams: {} }))
    expect(all.items.map((d) => d.title)).toEqual(["Net mending", "Lighthouse rota", "Harbour tides"])
    expect(all.next_offset).toBeNull()
    expect(all.items[2]).toMatchObject({
      id: made[0],
      integration_id: "alpha",
      content_chars: "Harbour tides: notes on the harbour tides.".length,
      chunk_count: 1
    })
    expect(all.items[0]).not.toHaveProperty("content")

    const alpha = await server.call((client) => client.documents.list({ urlParams: { integration_id: "alpha" } }))
    expect(alpha.items.map((d) => d.title)).toEqual(["Net mending", "Harbour tides"])

    const first = await server.call((client) => client.documents.list({ urlParams: { limit: 2 } }))
    expect(first.items.map((d) => d.title)).toEqual(["Net mending", "Lighthouse rota"])
    expect(first.next_offset).toBe(2)
    const second = await server.call((client) => client.documents.list({ urlParams: { limit: 2, offset: 2 } }))
    expect(second.items.map((d) => d.title)).toEqual(["Harbour tides"])
    expect(second.next_offset).toBeNull()
  })

  it("refuses a bad limit with a 422 naming it", async () => {
    const response = await server.request("/api/v1/documents?limit=0")
    expect(response.status).toBe(422)
    expect((await json(response)).detail[0].loc).toEqual(["query", "limit"])
  })
})
