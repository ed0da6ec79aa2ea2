/**
 * Workflows on a running server: a run of four steps (templating, a step that fails once and is
 * retried, a condition that skips one, an approval gate) to completion; params checked against
 * their types; cancel, skip and retry by hand; YAML export; a bot starting a run through the
 * workflow's tool. And a server killed in the middle of a run: after the restart the run finishes,
 * each step done once.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type FakeLlm, startFakeLlm } from "../fixtures/fakeLlm.ts"
import { backends, createTestDatabase, tempDir } from "../support/database.ts"
import { json, spawnDeadlineMs, spawnServer, startServer, type TestServer } from "../support/server.ts"
import { scaled, waitFor } from "../support/time.ts"

const pipeline = {
  id: "harbour-report",
  name: "Harbour report",
  params: {
    topic: { type: "string", required: true },
    urgent: { type: "boolean", default: false },
    pages: { type: "integer", default: 1 }
  },
  steps: [
    { id: "gather", prompt: "Gather news on {{topic}} ({{pages}} page)" },
    { id: "analyse", prompt: "Analyse: {{steps.gather.result}}", retries: 1 },
    { id: "alert", prompt: "Raise the alarm about {{topic}}", when: { param: "urgent", equals: true } },
    { id: "publish", prompt: "Publish: {{steps.analyse.result}}", approval: true }
  ],
  triggers: { api: true, tool: { description: "Report on the harbour" } }
}

const waitForRun = async (server: { request: TestServer["request"] }, runId: string, done: (run: any) => boolean, timeoutMs = 20_000) => {
  let last: unknown
  return waitFor(
    async () => {
      last = await json(await server.request(`/api/v1/admin/workflow-runs/${runId}`))
      return done(last) ? last as any : undefined
    },
    `run ${runId} to get there`,
    timeoutMs,
    100
  ).catch((error: Error) => {
    throw new Error(`${error.message}; last seen: ${JSON.stringify(last)}`)
  })
}

describe.each(backends)("workflows (%s)", (backend) => {
  let llm: FakeLlm
  let server: TestServer

  beforeAll(async () => {
    llm = await startFakeLlm({ defaultReply: { text: "Done." } })
    server = await startServer({
      backend,
      env: { OPENAI_BASE_URL: llm.url, OPENAI_API_KEY: "sk-wf", DEFAULT_MODEL: "fake-model", LLM_MAX_RETRIES: "0", WORKFLOW_TICK_MS: "100" }
    })
    const created = await server.request("/api/v1/admin/workflows", { method: "POST", body: JSON.stringify(pipeline) })
    expect(created.status).toBe(201)
  })
  afterAll(async () => {
    await server?.close()
    await llm?.close()
  })

  it("runs to completion: templated prompts, a retried failure, a skipped condition, an approval gate", async () => {
    llm.script({ text: "Two ships arrived." }, { status: 500 }, { text: "Traffic is calm." }, { text: "Published the note." })
    const started = await server.request("/api/v1/admin/workflows/harbour-report/run", {
      method: "POST",
      body: JSON.stringify({ params: { topic: "the harbour" } })
    })
    expect(started.status).toBe(202)
    const run = await json(started)
    expect(run).toMatchObject({
      workflow_id: "harbour-report",
      params: { topic: "the harbour", urgent: false, pages: 1 },
      triggered_by: "api:static"
    })
    const waiting = await waitForRun(server, run.id, (r) => r.status === "waiting")
    expect(waiting.steps.map((s: any) => [s.id, s.status])).toEqual([
      ["gather", "complete"],
      ["analyse", "complete"],
      ["alert", "skipped"],
      ["publish", "waiting_approval"]
    ])
    expect(waiting.steps[1]).toMatchObject({ attempts: 2, result: "Traffic is calm." })
    const approved = await server.request(`/api/v1/admin/workflow-runs/${run.id}/steps/publish/approve`, { method: "POST" })
    expect(approved.status).toBe(200)
    const done = await waitForRun(server, run.id, (r) => r.status === "complete")
    expect(done.steps.map((s: any) => s.status)).toEqual(["complete", "complete", "skipped", "complete"])
    expect(done.steps[3].result).toBe("Published the note.")
    const prompts = llm.requestsTo("/v1/chat/completions").map((r: any) =>
      r.body.messages.filter((m: any) => m.role === "user").at(-1)?.content
    )
    expect(prompts).toContain("Gather news on the harbour (1 page)")
    expect(prompts).toContain("Analyse: Two ships arrived.")
    expect(prompts).toContain("Publish: Traffic is calm.")
    expect(prompts.some((p: string) => p?.startsWith("Raise the alarm"))).toBe(false)
    expect((await server.request(`/api/v1/admin/workflow-runs/${run.id}/steps/publish/approve`, { method: "POST" })).status).toBe(409)
  })

  it("checks params against their types with 422 at each", async () => {
    const refused = await server.request("/api/v1/admin/workflows/harbour-report/run", {
      method: "POST",
      body: JSON.stringify({ params: { pages: "two", colour: "red" } })
    })
    expect(refused.status).toBe(422)
    expect((await json(refused)).detail.map((d: any) => `${d.loc.join(".")}:${d.type}`).sort()).toEqual([
      "body.params.colour:unknown_param",
      "body.params.pages:type_error",
      "body.params.topic:missing"
    ])
    expect((await server.request("/api/v1/admin/workflows/nope/run", { method: "POST", body: "{}" })).status).toBe(404)
    const bad = await server.request("/api/v1/admin/workflows", {
      method: "POST",
      body: JSON.stringify({ ...pipeline, id: "broken", steps: [{ id: "a", prompt: "{{missing}}" }] })
    })
    expect(bad.status).toBe(422)
    expect((await server.request("/api/v1/admin/workflows", { method: "POST", body: JSON.stringify(pipeline) })).status).toBe(409)
    // A tool trigger may not take the name of a tool it does not own.
    const stolen = await server.request("/api/v1/admin/workflows", {
      method: "POST",
      body: JSON.stringify({ ...pipeline, id: "thief", triggers: { tool: { name: "current_time" } } })
    })
    expect(stolen.status).toBe(422)
    expect((await json(stolen)).detail[0]).toMatchObject({ loc: ["body", "triggers", "tool", "name"], type: "tool_name_taken" })
    const internal = await server.request("/api/v1/admin/workflows", {
      method: "POST",
      body: JSON.stringify({ ...pipeline, id: "internal-only", triggers: { api: false } })
    })
    expect(internal.status).toBe(201)
    expect(
      (await server.request("/api/v1/admin/workflows/internal-only/run", {
        method: "POST",
        body: JSON.stringify({ params: { topic: "x" } })
      })).status
    ).toBe(409)
    expect((await server.request("/api/v1/admin/workflow-runs/aaaaaaaa-aaaa-aaaa-aaaa-aaaaaaaaaaaa")).status).toBe(404)
    expect((await server.request("/api/v1/admin/workflow-runs/not-a-run/cancel", { method: "POST" })).status).toBe(404)
  })

  it("fails a run when a step fails past its retries, then retries, skips and cancels by hand", async () => {
    llm.script({ text: "Nothing new." }, { status: 500 }, { status: 500 })
    const run = await json(
      await server.request("/api/v1/admin/workflows/harbour-report/run", {
        method: "POST",
        body: JSON.stringify({ params: { topic: "fog" } })
      })
    )
    const failed = await waitForRun(server, run.id, (r) => r.status === "failed")
    expect(failed.steps[1]).toMatchObject({ status: "failed", attempts: 2 })
    expect(failed.error).toContain("Step analyse failed")
    llm.script({ text: "Fog lifts." })
    expect((await server.request(`/api/v1/admin/workflow-runs/${run.id}/steps/analyse/retry`, { method: "POST" })).status).toBe(200)
    const waiting = await waitForRun(server, run.id, (r) => r.status === "waiting")
    expect(waiting.steps[1]).toMatchObject({ status: "complete", result: "Fog lifts." })
    const skipped = await json(await server.request(`/api/v1/admin/workflow-runs/${run.id}/steps/publish/skip`, { method: "POST" }))
    expect(skipped.steps[3].status).toBe("skipped")
    expect((await waitForRun(server, run.id, (r) => r.status === "complete")).status).toBe("complete")

    llm.script({ text: "Quiet." }, { text: "Nothing to add." })
    const another = await json(
      await server.request("/api/v1/admin/workflows/harbour-report/run", {
        method: "POST",
        body: JSON.stringify({ params: { topic: "cancel me" } })
      })
    )
    await waitForRun(server, another.id, (r) => r.status === "waiting")
    const cancelled = await json(await server.request(`/api/v1/admin/workflow-runs/${another.id}/cancel`, { method: "POST" }))
    expect(cancelled.status).toBe("cancelled")
    expect(cancelled.steps.map((s: any) => s.status)).toEqual(["complete", "complete", "skipped", "cancelled"])
    expect((await server.request(`/api/v1/admin/workflow-runs/${another.id}/cancel`, { method: "POST" })).status).toBe(409)
  })

  it("fails a step that runs past its timeout", async () => {
    const created = await server.request("/api/v1/admin/workflows", {
      method: "POST",
      body: JSON.stringify({ id: "hasty", name: "Hasty", steps: [{ id: "wait", prompt: "Take your time", timeout_seconds: 1 }] })
    })
    expect(created.status).toBe(201)
    llm.script({ text: "Finally.", delayMs: 4000 })
    const run = await json(await server.request("/api/v1/admin/workflows/hasty/run", { method: "POST", body: "{}" }))
    const failed = await waitForRun(server, run.id, (r) => r.status === "failed")
    expect(failed.steps[0]).toMatchObject({ status: "failed", error: "Timed out after 1 s", attempts: 1 })
    // The cut-off answer arrives later and is not used.
    await new Promise((resolve) => setTimeout(resolve, 3500))
    expect((await json(await server.request(`/api/v1/admin/workflow-runs/${run.id}`))).steps[0].result).toBeNull()
  })

  it("exports YAML and starts a run from a bot's tool call", async () => {
    const exported = await server.request("/api/v1/admin/workflows/harbour-report/export")
    expect(exported.headers.get("content-type")).toContain("yaml")
    expect(await exported.text()).toContain("id: harbour-report")
    expect((await json(await server.request("/api/v1/admin/workflows"))).map((w: any) => w.id)).toEqual(
      expect.arrayContaining(["harbour-report", "research-and-report", "mailbox-daily-digest"])
    )
    expect(
      (await server.request("/api/v1/admin/bots", {
        method: "POST",
        body: JSON.stringify({ id: "dispatcher", name: "Dispatcher", tools: ["workflow_harbour_report"] })
      })).status
    ).toBe(201)
    llm.script({ toolCalls: [{ name: "workflow_harbour_report", arguments: JSON.stringify({ topic: "by tool" }) }] }, {
      text: "Started it."
    })
    expect(
      (await server.request("/chat", { method: "POST", body: JSON.stringify({ message: "Report please", bot_id: "dispatcher" }) })).status
    ).toBe(200)
    const runs = await json(await server.request("/api/v1/admin/workflow-runs?workflow_id=harbour-report&limit=1"))
    expect(runs[0]).toMatchObject({ params: { topic: "by tool" }, triggered_by: "tool:dispatcher" })
    await server.request(`/api/v1/admin/workflow-runs/${runs[0].id}/cancel`, { method: "POST" })
  })
})

describe.each(backends)("a workflow's schedule trigger (%s)", (backend) => {
  it("starts one run per slot with the schedule's params", async () => {
    const llm = await startFakeLlm({ defaultReply: { text: "Tick." } })
    const server = await startServer({
      backend,
      env: { OPENAI_BASE_URL: llm.url, OPENAI_API_KEY: "sk-wf", DEFAULT_MODEL: "fake-model", WORKFLOW_TICK_MS: "100" }
    })
    try {
      const created = await server.request("/api/v1/admin/workflows", {
        method: "POST",
        body: JSON.stringify({
          id: "every-second",
          name: "Every second",
          params: { label: { type: "string", required: true } },
          steps: [{ id: "tick", prompt: "Tick for {{label}}" }],
          triggers: { schedule: { cron: "* * * * * *", params: { label: "the clock" } } }
        })
      })
      expect(created.status).toBe(201)
      await waitFor(
        async () =>
          ((await json(await server.request("/api/v1/admin/workflow-runs?workflow_id=every-second"))) as Array<unknown>).length >= 2
            ? true
            : undefined,
        "two scheduled runs"
      )
      expect((await server.request("/api/v1/admin/workflows/every-second", { method: "DELETE" })).status).toBe(204)
      const runs = (await json(await server.request("/api/v1/admin/workflow-runs?workflow_id=every-second"))) as Array<any>
      expect(runs.length).toBeGreaterThanOrEqual(2)
      expect(runs.every((run) => run.triggered_by.startsWith("schedule:") && run.params.label === "the clock")).toBe(true)
      expect(new Set(runs.map((run) => run.triggered_by)).size).toBe(runs.length)
    } finally {
      await server.close()
      await llm.close()
    }
  }, scaled(30_000))
})

describe.each(backends)("a workflow run across a server killed mid-run (%s)", (backend) => {
  it("finishes after the restart, each step done once", async () => {
    const llm = await startFakeLlm({ defaultReply: { text: "ok" } })
    const db = await createTestDatabase(backend, { migrated: true })
    const dir = tempDir("cairn-workflows-")
    fs.writeFileSync(
      path.join(dir, "slow.json"),
      JSON.stringify({
        id: "slow",
        name: "Slow",
        steps: [{ id: "one", prompt: "first" }, { id: "two", prompt: "second after {{steps.one.result}}" }, {
          id: "three",
          prompt: "third"
        }]
      })
    )
    const env = {
      OPENAI_BASE_URL: llm.url,
      OPENAI_API_KEY: "sk-wf",
      DEFAULT_MODEL: "fake-model",
      WORKFLOWS_DIR: dir,
      WORKFLOW_TICK_MS: "100",
      TASK_LEASE_SECONDS: "3"
    }
    let server = await spawnServer(db, env)
    try {
      llm.script({ text: "one done" }, { text: "two done", delayMs: 60_000 })
      const run = await json(await server.request("/api/v1/admin/workflows/slow/run", { method: "POST", body: "{}" }))
      await waitForRun(server, run.id, (r) => r.steps[1].status === "running")
      await new Promise((resolve) => setTimeout(resolve, 500))
      await server.stop("SIGKILL")
      llm.script({ text: "two done" }, { text: "three done" })
      server = await spawnServer(db, env)
      const done = await waitForRun(server, run.id, (r) => r.status === "complete", 40_000)
      expect(done.steps.map((s: any) => [s.id, s.status, s.result])).toEqual([
        ["one", "complete", "one done"],
        ["two", "complete", "two done"],
        ["three", "complete", "three done"]
      ])
      const prompts = llm.requestsTo("/v1/chat/completions").map((r: any) =>
        r.body.messages.filter((m: any) => m.role === "user").at(-1)?.content
      )
      expect(prompts.filter((p: string) => p === "first")).toHaveLength(1)
      expect(prompts.filter((p: string) => p === "third")).toHaveLength(1)
      // The interrupted step's one task ran again after its lease ran out; no second task was made.
      expect(done.steps[1].attempts).toBe(1)
    } finally {
      await server.stop()
      await db.drop()
      await llm.close()
    }
  }, 2 * spawnDeadlineMs + scaled(60_000))
})
