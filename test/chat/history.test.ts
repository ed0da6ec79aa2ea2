/**
 * A turn's history is read whole once per session, then only what was added since (see
 * src/sessions/History.ts). Whatever added it, the model gets every stored message: a passive one
 * sent between turns, one whose seq is older than the newest read (a commit that landed late), one
 * stored without moving the session's count, and, on PostgreSQL, the turns another server process
 * ran on the same session.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { randomUUID } from "node:crypto"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { ChatRequest } from "../../src/chat/Model.ts"
import { type FakeLlm, startFakeLlm } from "../fixtures/fakeLlm.ts"
import { withDefaults } from "../support/client.ts"
import { type Backend, backends } from "../support/database.ts"
import { startServer, type TestServer } from "../support/server.ts"

const chatRequest = withDefaults(ChatRequest)

/** A server on `backend` and a fake LLM, with what the tests read of them. */
const harness = (backend: Backend) => {
  let llm: FakeLlm
  let server: TestServer
  let clients = 0
  const env = () => ({ OPENAI_BASE_URL: llm.url, OPENAI_API_KEY: "sk-history-key-0123456789", DEFAULT_MODEL: "fake-model" })

  beforeAll(async () => {
    llm = await startFakeLlm()
    server = await startServer({ backend, env: env() })
  })
  afterAll(async () => {
    await server?.close()
    await llm?.close()
  })
  beforeEach(() => llm.reset())

  return {
    llm: () => llm,
    server: () => server,
    env,
    client: () => `history-${++clients}`,
    chat: (on: TestServer, body: typeof ChatRequest.Encoded) => on.call((c) => c.chat.chat({ payload: chatRequest(body) })),
    /** The history the model got on the last call (its system prompt left out). */
    lastContext: () =>
      (llm.requestsTo("/v1/chat/completions").at(-1)!.body.messages as Array<{ role: string; content: string }>)
        .filter((message) => message.role !== "system")
        .map((message) => message.content),
    /** The session's stored messages up to the last call (its answer, stored after it, left out). */
    storedBeforeAnswer: async (sessionId: string) =>
      (await server.call((c) => c.sessions.messages({ path: { id: sessionId } }))).map((message) => message.content).slice(0, -1)
  }
}

describe.each(backends)("history read since the last turn (%s)", (backend) => {
  const { llm, server, client, chat, lastContext, storedBeforeAnswer } = harness(backend)

  it("gives the model the messages added between turns, and a late commit older than the newest read", async () => {
    const id = client()
    llm().setDefaultReply({ text: "noted" })
    const first = await chat(server(), { message: "one", client_id: id })
    await chat(server(), { message: "two", client_id: id })
    expect(lastContext()).toEqual(["one", "noted", "two"])

    await chat(server(), { message: "an aside", client_id: id, passive: true })
    await chat(server(), { message: "three", client_id: id })
    expect(lastContext()).toEqual(["one", "noted", "two", "noted", "an aside", "three"])

    // A row with the seq of the newest message the last turn read ("three"; its answer came after
    // the read), committed since and counted in its session as every stored message is: a read of
    // only the newer rows would never see it; the count it moved sends the next turn back to a
    // whole read.
    await server().run(
      Effect.flatMap(SqlClient.SqlClient, (sql) =>
        sql`WITH late AS (
              INSERT INTO messages (id, session_id, seq, role, content)
              SELECT ${randomUUID()}, session_id, seq, 'user', 'committed late' FROM messages
              WHERE session_id = ${first.session_id} AND content = 'three'
              RETURNING session_id
            )
            UPDATE sessions SET message_count = message_count + 1 WHERE id IN (SELECT session_id FROM late)`)
    )
    await chat(server(), { message: "four", client_id: id })
    const context = lastContext()
    expect(context).toContain("committed late")
    expect([...context].sort()).toEqual([...(await storedBeforeAnswer(first.session_id))].sort())
  })

  it("gives the model a message stored without moving the count, as a release before the count stores one", async () => {
    const id = client()
    llm().setDefaultReply({ text: "noted" })
    const first = await chat(server(), { message: "one", client_id: id })
    await chat(server(), { message: "two", client_id: id })
    // This server's own writes since the last read extend its window without a read; the next
    // message's statement sees a newer message than the window's newest, and the turn reads.
    await server().run(
      Effect.flatMap(
        SqlClient.SqlClient,
        (sql) =>
          sql`INSERT INTO messages (id, session_id, role, content) VALUES (${randomUUID()}, ${first.session_id}, 'user', 'uncounted')`
      )
    )
    await chat(server(), { message: "three", client_id: id })
    expect(lastContext()).toEqual(["one", "noted", "two", "noted", "uncounted", "three"])
    expect(lastContext()).toEqual(await storedBeforeAnswer(first.session_id))
  })
})

// Two server processes need a database both reach: PostgreSQL (PGlite belongs to one process).
describe("history read since the last turn, two servers on one database (postgres)", () => {
  const { llm, server, env, client, chat, lastContext, storedBeforeAnswer } = harness("postgres")

  it("gives the model the turns another server process ran on the session", async () => {
    const other = await startServer({ backend: "postgres", db: server().db, env: env() })
    try {
      const id = client()
      llm().setDefaultReply({ text: "ok" })
      const first = await chat(server(), { message: "here", client_id: id })
      await chat(other, { message: "there", client_id: id })
      await chat(other, { message: "there again", client_id: id })
      await chat(server(), { message: "back here", client_id: id })
      expect(lastContext()).toEqual(["here", "ok", "there", "ok", "there again", "ok", "back here"])
      expect(lastContext()).toEqual(await storedBeforeAnswer(first.session_id))
    } finally {
      await other.close()
    }
  })
})
