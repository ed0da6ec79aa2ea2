/**
 * A task taken again after its lease lapsed while its first run's host was only cut off from the
 * database (a partition, not a death): that run's end may land after the new worker looked for it
 * and before the worker takes the session's lock. The worker looks again once it holds the lock,
 * and records the task from that run instead of answering it a second time.
 *
 * The late end is made by the database itself: a trigger on the lock's insert ends the first run
 * with its answer, at the one moment the race needs, and another keeps the server's sweep of stale
 * runs from closing it first, so the test does not depend on timing.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { randomUUID } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type FakeLlm, startFakeLlm } from "../fixtures/fakeLlm.ts"
import { backends } from "../support/database.ts"
import { json, startServer, taskEnded, type TestServer } from "../support/server.ts"

describe.each(backends)("a task's earlier run ending late (%s)", (backend) => {
  let llm: FakeLlm
  let server: TestServer

  const sql = (text: string) => server.run(Effect.flatMap(SqlClient.SqlClient, (client) => client.unsafe(text)))
  const pause = async (paused: boolean) =>
    expect(
      (await server.request("/api/v1/admin/settings", { method: "PUT", body: JSON.stringify({ SYSTEM_PAUSED: paused }) })).status
    ).toBe(200)

  beforeAll(async () => {
    llm = await startFakeLlm()
    server = await startServer({
      backend,
      env: { OPENAI_BASE_URL: llm.url, OPENAI_API_KEY: "sk-test-fake-key-1234567890", DEFAULT_MODEL: "fake-model" }
    })
  })
  afterAll(async () => {
    await server?.close()
    await llm?.close()
  })

  it("is recorded from that run's answer, not answered again, when the end lands just before the session's lock", async () => {
    await pause(true)
    const { session_id: session } = await json(
      await server.request("/api/v1/sessions", { method: "POST", body: JSON.stringify({ client_id: "late-end" }) })
    )
    const { task_id: task } = await json(
      await server.request(`/api/v1/sessions/${session}/messages`, {
        method: "POST",
        body: JSON.stringify({ content: "answer me once", source: "test", run_agent: true, notify: false })
      })
    )
    // The first run, still running as far as the database knows: its host is cut off, its
    // heartbeat stale, so the worker may take the task again (and will close the run when it takes
    // the session's lock).
    const firstRun = randomUUID()
    await sql(`INSERT INTO runs (id, session_id, status, owner, task_id, heartbeat_at)
      VALUES ('${firstRun}', '${session}', 'running', 'a-host-cut-off', '${task}', now() - interval '1 hour')`)
    await sql(`UPDATE tasks SET run_id = '${firstRun}' WHERE id = '${task}'`)
    // Its end lands when the next lock on the session is taken: after the worker's first look.
    await sql(`CREATE FUNCTION late_end() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.session_id = '${session}' AND NEW.id <> '${firstRun}' THEN
          UPDATE runs SET status = 'complete', finished_at = now() WHERE id = '${firstRun}' AND status = 'running';
          INSERT INTO run_events (run_id, seq, event)
            VALUES ('${firstRun}', 1, '{"type":"response","text":"answered by the cut-off host","client_actions":[]}')
            ON CONFLICT DO NOTHING;
        END IF;
        RETURN NEW;
      END $$`)
    await sql(`CREATE TRIGGER late_end BEFORE INSERT ON runs FOR EACH ROW EXECUTE FUNCTION late_end()`)
    // Until then the server's sweep of stale runs has not come round to it: its closing is skipped.
    await sql(`CREATE FUNCTION not_swept_yet() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF OLD.id = '${firstRun}' AND NEW.status = 'failed' THEN RETURN NULL; END IF;
        RETURN NEW;
      END $$`)
    await sql(`CREATE TRIGGER not_swept_yet BEFORE UPDATE ON runs FOR EACH ROW EXECUTE FUNCTION not_swept_yet()`)
    try {
      const calls = llm.requestsTo("/v1/chat/completions").length
      await pause(false)
      expect(await taskEnded(server, task, 30_000)).toMatchObject({ status: "complete", result: "answered by the cut-off host" })
      expect(llm.requestsTo("/v1/chat/completions")).toHaveLength(calls)
      // The lock the worker took to look again was given back: the session takes a new turn.
      const next = await server.request("/chat", {
        method: "POST",
        body: JSON.stringify({ client_id: "late-end", session_id: session, message: "and now?" })
      })
      expect(next.status).toBe(200)
    } finally {
      await sql(`DROP TRIGGER IF EXISTS late_end ON runs`)
      await sql(`DROP FUNCTION IF EXISTS late_end()`)
      await sql(`DROP TRIGGER IF EXISTS not_swept_yet ON runs`)
      await sql(`DROP FUNCTION IF EXISTS not_swept_yet()`)
      await pause(false)
    }
  })
})
