/**
 * What the chat does with a user's conversations (migration 0080): pin one to the top of its list,
 * archive one out of it (listed on request, still found), rename it, and search every conversation
 * by the words of its title or its messages (PostgreSQL full text, on both databases), each result
 * with the words around its first match.
 */
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Forbidden, NotFound } from "../../src/contract/Errors.ts"
import { Sessions } from "../../src/sessions/Sessions.ts"
import { backends } from "../support/database.ts"
import { startServer, type TestServer } from "../support/server.ts"

describe.each(backends)("pinned, archived and searched conversations (%s)", (backend) => {
  let server: TestServer
  const ids: Record<string, string> = {}

  beforeAll(async () => {
    server = await startServer({ backend })
    const conversations: Record<string, ReadonlyArray<string>> = {
      trip: ["Plan a trip to the mountains in spring", "Pack warm layers and check the avalanche forecast."],
      bread: ["How do I bake sourdough bread?", "Feed the starter, then a long cold proof."],
      taxes: ["When are taxes due?", "In April, usually."]
    }
    for (const [name, [question, answer]] of Object.entries(conversations)) {
      const { session_id } = await server.call((client) =>
        client.sessions.create({ payload: { bot_id: "default", client_id: `web:features-${name}` } })
      )
      ids[name] = session_id
      await server.run(
        Effect.flatMap(Sessions, (sessions) =>
          Effect.zipRight(
            sessions.append(session_id, { role: "user", content: question! }),
            sessions.append(session_id, { role: "assistant", content: answer! })
          ))
      )
    }
  })
  afterAll(async () => {
    await server?.close()
  })

  const listed = async (archived?: boolean) =>
    (await server.call((client) => client.sessions.legacyList({ urlParams: archived === undefined ? {} : { archived } }))).map((s) => s.id)

  it("finds conversations by the words of their messages and titles, with the words around the match", async () => {
    const { results } = await server.call((client) => client.sessions.search({ urlParams: { q: "avalanche" } }))
    expect(results.map((result) => result.session.id)).toEqual([ids.trip])
    expect(results[0]!.snippet).toContain("avalanche")
    // Every word must be there, in any message.
    const both = await server.call((client) => client.sessions.search({ urlParams: { q: "starter proof" } }))
    expect(both.results.map((result) => result.session.id)).toEqual([ids.bread])
    const none = await server.call((client) => client.sessions.search({ urlParams: { q: "starter avalanche" } }))
    expect(none.results).toEqual([])
    // A title matches by a part of a word, as it is being typed.
    const titled = await server.call((client) => client.sessions.search({ urlParams: { q: "sourd" } }))
    expect(titled.results.map((result) => result.session.id)).toEqual([ids.bread])
  })

  it("pins a conversation to the top of the list, and unpins it", async () => {
    expect((await listed())[0]).toBe(ids.taxes)
    const pinned = await server.call((client) => client.sessions.update({ path: { id: ids.trip! }, payload: { pinned: true } }))
    expect(pinned.pinned).toBe(true)
    expect((await listed())[0]).toBe(ids.trip)
    await server.call((client) => client.sessions.update({ path: { id: ids.trip! }, payload: { pinned: false } }))
    expect((await listed())[0]).toBe(ids.taxes)
  })

  it("archives a conversation out of the list: listed on request, still found, restored", async () => {
    const archived = await server.call((client) => client.sessions.update({ path: { id: ids.taxes! }, payload: { archived: true } }))
    expect(archived).toMatchObject({ archived: true, pinned: false })
    expect(await listed()).not.toContain(ids.taxes)
    expect(await listed(true)).toEqual([ids.taxes])
    const found = await server.call((client) => client.sessions.search({ urlParams: { q: "taxes" } }))
    expect(found.results.map((result) => result.session.archived)).toEqual([true])
    const renamed = await server.call((client) =>
      client.sessions.update({ path: { id: ids.taxes! }, payload: { archived: false, title: "Tax dates" } })
    )
    expect(renamed).toMatchObject({ archived: false, title: "Tax dates" })
    expect(await listed()).toContain(ids.taxes)
  })

  it("refuses an empty change, an unknown session, a blank search and a caller without the scope", async () => {
    const empty = await server.request(`/api/v1/sessions/${ids.trip}`, { method: "PATCH", body: "{}" })
    expect(empty.status).toBe(422)
    await server.failsWith(
      NotFound,
      (client) => client.sessions.update({ path: { id: "7d2c9d3e-0d7e-4d0c-9a55-0d1c2b3a4f59" }, payload: { pinned: true } })
    )
    expect((await server.request("/api/v1/sessions/search?q=%20%20")).status).toBe(422)
    const key = await server.call((client) => client.apiKeys.create({ payload: { name: "chat only", scopes: ["chat"] } }))
    await server.as(key.key).failsWith(Forbidden, (client) => client.sessions.search({ urlParams: { q: "trip" } }))
    await server.as(key.key).failsWith(
      Forbidden,
      (client) => client.sessions.update({ path: { id: ids.trip! }, payload: { pinned: true } })
    )
  })
})
