/**
 * The GitHub integration's deliveries on the inbound ledger (issue 56, item 1), on both databases:
 * a redelivery (the same X-GitHub-Delivery) is a duplicate and acts on nothing twice; an event
 * ignored stays ignored after its repository is bound; a delivery whose comment could not be posted
 * is a dead letter, and its retry posts it once; a delivery id an older release remembered (its LRU
 * set, before the ledger) is still a duplicate; a delivery recorded and never decided (a process
 * that died) is decided by the resume worker; and a dead delivery no task answers yet goes back to
 * the integration at once when a person retries it (`cairn.inbound.onRetry`), not at the resume
 * worker's next pass.
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import * as crypto from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type FakeLlm, startFakeLlm } from "../fixtures/fakeLlm.ts"
import { type FakeGithub, startFakeGithub } from "../fixtures/githubServer.ts"
import { backends, createTestDatabase, type TestDatabase, withDatabase } from "../support/database.ts"
import { json, startServer, type TestServer } from "../support/server.ts"
import { waitFor } from "../support/time.ts"

const SECRET = "github-webhook-secret-0123456789"
const REPO = "acme/widgets"
const REPLY = "Thanks, here is what I think."
const MARKER = /<!-- cairn-delivery: ([^ ]+) -->/

const sign = (body: string) => `sha256=${crypto.createHmac("sha256", SECRET).update(body).digest("hex")}`
const opened = (number: number, repository = REPO) => ({
  action: "opened",
  issue: { number, title: `Issue ${number}`, body: `issue-${number}`, html_url: `https://github.test/i/${number}`, user: { login: "bob" } },
  repository: { full_name: repository },
  sender: { login: "bob" }
})

describe.each(backends)("GitHub deliveries on the inbound ledger (%s)", (backend) => {
  let github: FakeGithub
  let llm: FakeLlm
  let db: TestDatabase
  let server: TestServer

  const start = async () => {
    server = await startServer({
      backend,
      db,
      env: {
        LLM_MAX_RETRIES: "0",
        TASK_POLL_MS: "50",
        DISPATCH_MAX_ATTEMPTS: "2",
        DISPATCH_RETRY_BASE_MS: "50",
        OPENAI_BASE_URL: llm.url,
        OPENAI_API_KEY: "sk-test-fake-key-1234567890",
        DEFAULT_MODEL: "fake-model"
      }
    })
  }
  const deliver = async (payload: unknown, delivery: string = crypto.randomUUID()) => {
    const body = JSON.stringify(payload)
    const response = await fetch(`${server.baseUrl}/integrations/github/webhook`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "x-github-event": "issues",
        "x-github-delivery": delivery,
        "x-hub-signature-256": sign(body)
      },
      body
    })
    return { status: response.status, body: (await response.json()) as any, delivery }
  }
  const bindRepository = async (repository: string) => {
    const channel = (await json(
      await server.request("/api/v1/admin/channels", { method: "POST", body: JSON.stringify({ name: repository, bot_id: "default" }) })
    )).id as string
    const bound = await server.request(`/api/v1/channels/${channel}/integrations`, {
      method: "POST",
      body: JSON.stringify({ integration_type: "github", client_id: `github:${repository}` })
    })
    expect(bound.status).toBe(201)
    return channel
  }
  const tasks = async () =>
    ((await json(await server.request("/api/v1/tasks?limit=500"))) as Array<any>).filter((t) => t.source === "integration:github")
  const deadLetter = (delivery: string) =>
    waitFor(async () => {
      const list = await json(await server.request("/api/v1/admin/dead-letters?source=github"))
      return (list.items as Array<any>).find((item) => item.external_id === delivery)
    }, `delivery ${delivery} in the dead-letter queue`)
  const ours = (repository: string, number: number) => github.comments(repository, number).filter((c) => MARKER.test(c.body))

  beforeAll(async () => {
    github = await startFakeGithub()
    llm = await startFakeLlm({ defaultReply: { text: REPLY } })
    db = await createTestDatabase(backend, { migrated: true })
    await start()
    const saved = await server.request("/api/v1/admin/integrations/github/settings", {
      method: "PUT",
      body: JSON.stringify({
        GITHUB_WEBHOOK_SECRET: SECRET,
        GITHUB_TOKEN: github.token,
        GITHUB_BOT_LOGIN: github.login,
        GITHUB_API_URL: github.url
      })
    })
    expect(saved.status).toBe(200)
    await bindRepository(REPO)
  })
  afterAll(async () => {
    await server?.close()
    await db?.drop()
    await llm?.close()
    await github?.close()
  })

  it("answers a redelivery as a duplicate and acts on nothing twice", async () => {
    const before = (await tasks()).length
    const first = await deliver(opened(60))
    expect(first.body).toMatchObject({ status: "queued" })
    await waitFor(async () => (ours(REPO, 60).length === 1 ? true : undefined), "the comment")
    const again = await deliver(opened(60), first.delivery)
    expect(again).toMatchObject({ status: 200, body: { status: "duplicate", delivery: first.delivery } })
    expect(["queued", "run", "delivered"]).toContain(again.body.state)
    expect(await tasks()).toHaveLength(before + 1)
    expect(ours(REPO, 60)).toHaveLength(1)
  })

  it("keeps an ignored event ignored after its repository is bound", async () => {
    const before = (await tasks()).length
    const first = await deliver(opened(1, "acme/later"))
    expect(first.body).toMatchObject({ status: "ignored", reason: "unbound" })
    await bindRepository("acme/later")
    const again = await deliver(opened(1, "acme/later"), first.delivery)
    expect(again.body).toMatchObject({ status: "duplicate", state: "ignored", reason: "unbound" })
    expect(await tasks()).toHaveLength(before)
    expect(github.comments("acme/later", 1)).toHaveLength(0)
  })

  it("makes a delivery whose comment was refused a dead letter; its retry posts it once", async () => {
    github.refuseComments(2, 500)
    const first = await deliver(opened(61))
    expect(first.body.status).toBe("queued")
    const dead = await deadLetter(first.delivery)
    expect(dead).toMatchObject({ source: "github", integration: "github", state: "dead", task_ids: [first.body.task_id] })
    expect(dead.summary).toContain(`${REPO}#61`)
    expect(dead.last_error).toMatch(/500/)
    expect(github.comments(REPO, 61)).toHaveLength(0)
    const retried = await server.request(`/api/v1/admin/dead-letters/${dead.id}/retry`, { method: "POST" })
    expect(retried.status).toBe(200)
    await waitFor(async () => (ours(REPO, 61).length === 1 ? true : undefined), "the retried comment")
    expect(ours(REPO, 61)[0]!.body.match(MARKER)?.[1]).toBe(first.delivery)
    const again = await deliver(opened(61), first.delivery)
    expect(again.body.status).toBe("duplicate")
    expect((await tasks()).filter((t) => t.id === first.body.task_id)).toHaveLength(1)
    expect(ours(REPO, 61)).toHaveLength(1)
  })

  it("after a restart: an older release's seen id is a duplicate, an undecided delivery is resumed, a dead one is retried at once", async () => {
    const ignored = await deliver(opened(5, "acme/third"))
    expect(ignored.body).toMatchObject({ status: "ignored", reason: "unbound" })
    const undecided = await deliver(opened(6, "acme/fourth"))
    await bindRepository("acme/fourth")
    const legacy = crypto.randomUUID()
    await server.close()
    // As an older release left them: a seen delivery id in its LRU set, and an item that exhausted its attempts.
    await withDatabase(
      db,
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* sql`INSERT INTO integration_lru_sets (integration_id, name, clock) VALUES ('github', 'deliveries', 1)
                   ON CONFLICT (integration_id, name) DO NOTHING`
        yield* sql`INSERT INTO integration_lru_members (integration_id, name, member, used) VALUES ('github', 'deliveries', ${legacy}, 1)`
        yield* sql`UPDATE inbound_items SET state = 'dead', reason = 'attempts exhausted', attempts = 5, last_error = 'queueing failed'
                   WHERE source = 'github' AND external_id = ${ignored.delivery}`
        // A process that died between recording a delivery and deciding it, a while ago.
        yield* sql`UPDATE inbound_items SET state = 'received', reason = NULL, received_at = received_at - interval '5 minutes'
                   WHERE source = 'github' AND external_id = ${undecided.delivery}`
      })
    )
    await start()
    // The resume worker's pass at its start decides it.
    await waitFor(async () => (ours("acme/fourth", 6).length === 1 ? true : undefined), "the resumed delivery's comment")
    const before = (await tasks()).length
    const old = await deliver(opened(62), legacy)
    expect(old.body).toMatchObject({ status: "duplicate", reason: "duplicate" })
    expect(await tasks()).toHaveLength(before)

    await bindRepository("acme/third")
    const dead = await deadLetter(ignored.delivery)
    const retried = await server.request(`/api/v1/admin/dead-letters/${dead.id}/retry`, { method: "POST" })
    expect(retried.status).toBe(200)
    expect((await json(retried)).state).toBe("received")
    // The resume worker's next pass is a minute away: the retry handed it over itself.
    await waitFor(async () => (ours("acme/third", 5).length === 1 ? true : undefined), "the retried delivery's comment", 30_000)
    expect(await tasks()).toHaveLength(before + 1)
    const again = await deliver(opened(5, "acme/third"), ignored.delivery)
    expect(again.body.status).toBe("duplicate")
    expect(ours("acme/third", 5)).toHaveLength(1)
  })
})
