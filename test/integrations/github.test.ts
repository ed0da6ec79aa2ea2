/**
 * The GitHub integration against a fake GitHub REST API and the fake LLM, through the whole server
 * on both databases: each of the five events makes one task with its execution config (preamble,
 * tool, skill) and one comment; the signature, redelivery, the dispatcher's retry after a 502 that
 * stored the comment, and the events it ignores (unbound repository, its own comment, no mention).
 */
import * as crypto from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type FakeLlm, startFakeLlm } from "../fixtures/fakeLlm.ts"
import { type FakeGithub, startFakeGithub } from "../fixtures/githubServer.ts"
import { backends, createTestDatabase, type TestDatabase } from "../support/database.ts"
import { json, startServer, type TestServer } from "../support/server.ts"
import { waitFor } from "../support/time.ts"

const SECRET = "github-webhook-secret-0123456789"
const REPO = "acme/widgets"
const REPLY = "Thanks, here is what I think."
const MARKER = /<!-- cairn-delivery: ([^ ]+) -->/

const sign = (body: string, secret = SECRET) => `sha256=${crypto.createHmac("sha256", secret).update(body).digest("hex")}`

const repository = (name = REPO) => ({ full_name: name, name: name.split("/")[1], owner: { login: name.split("/")[0] } })
const user = (login: string) => ({ login, type: "User" })
const pull = (number: number, text: string) => ({
  number,
  title: `PR ${number}`,
  body: text,
  html_url: `https://github.test/${REPO}/pull/${number}`,
  user: user("alice")
})
const issue = (number: number, text: string, isPull = false) => ({
  number,
  title: `Issue ${number}`,
  body: text,
  html_url: `https://github.test/${REPO}/issues/${number}`,
  user: user("bob"),
  ...(isPull ? { pull_request: { url: "x" } } : {})
})
const comment = (text: string, login = "carol") => ({ id: 1, body: text, html_url: "https://github.test/c/1", user: user(login) })

describe.each(backends)("the GitHub integration (%s)", (backend) => {
  let github: FakeGithub
  let llm: FakeLlm
  let db: TestDatabase
  let server: TestServer
  let channelId: string

  const deliver = async (event: string, payload: unknown, options: { delivery?: string; secret?: string } = {}) => {
    const body = JSON.stringify(payload)
    const delivery = options.delivery ?? crypto.randomUUID()
    const response = await fetch(`${server.baseUrl}/integrations/github/webhook`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "x-github-event": event,
        "x-github-delivery": delivery,
        "x-hub-signature-256": sign(body, options.secret)
      },
      body
    })
    return { status: response.status, body: (await response.json()) as any, delivery }
  }
  const tasks = async () =>
    ((await json(await server.request("/api/v1/tasks?limit=500"))) as Array<any>).filter((t) => t.source === "integration:github")
  const taskOf = async (id: string) => json(await server.request(`/api/v1/tasks/${id}`))
  const delivered = (id: string) =>
    waitFor(async () => ((await taskOf(id)).delivery_status === "delivered" ? true : undefined), "the delivery")
  /** The model's request that answered a message holding `text`. */
  const requestFor = (text: string) =>
    llm.requestsTo("/v1/chat/completions").find((r) =>
      r.body.messages.some((m: any) => typeof m.content === "string" && m.content.includes(text))
    )

  const serverEnv = () => ({
    LLM_MAX_RETRIES: "0",
    DISPATCH_RETRY_BASE_MS: "200",
    TASK_POLL_MS: "50",
    OPENAI_BASE_URL: llm.url,
    OPENAI_API_KEY: "sk-test-fake-key-1234567890",
    DEFAULT_MODEL: "fake-model"
  })

  beforeAll(async () => {
    github = await startFakeGithub()
    llm = await startFakeLlm({ defaultReply: { text: REPLY } })
    db = await createTestDatabase(backend, { migrated: true })
    server = await startServer({ backend, db, env: serverEnv() })
    const saved = await server.request("/api/v1/admin/integrations/github/settings", {
      method: "PUT",
      body: JSON.stringify({
        GITHUB_WEBHOOK_SECRET: SECRET,
        GITHUB_TOKEN: github.token,
        GITHUB_BOT_LOGIN: github.login,
        GITHUB_API_URL: github.url,
        GITHUB_MAX_PATCH_CHARS: "1000"
      })
    })
    expect(saved.status).toBe(200)
    channelId = (await json(
      await server.request("/api/v1/admin/channels", { method: "POST", body: JSON.stringify({ name: "widgets", bot_id: "default" }) })
    )).id
    const bound = await server.request(`/api/v1/channels/${channelId}/integrations`, {
      method: "POST",
      body: JSON.stringify({ integration_type: "github", client_id: `github:${REPO}` })
    })
    expect(bound.status).toBe(201)
  })
  afterAll(async () => {
    await server?.close()
    await db?.drop()
    await llm?.close()
    await github?.close()
  })

  it("reviews an opened pull request: one task with its config, the tool reads the PR, one comment", async () => {
    github.addPull(REPO, 7, {
      title: "PR 7",
      body: "adds widgets",
      files: Array.from({ length: 150 }, (_, i) => ({ filename: `src/f${i}.ts`, status: "modified", patch: `@@ -1 +1 @@\n-a${i}\n+b${i}` }))
    })
    llm.script({ toolCalls: [{ name: "get_pull_request", arguments: JSON.stringify({ number: 7 }) }] }, { text: REPLY })
    const answer = await deliver("pull_request", {
      action: "opened",
      number: 7,
      pull_request: pull(7, "pr-seven-body"),
      repository: repository(),
      sender: user("alice")
    })
    expect(answer).toMatchObject({ status: 200, body: { status: "queued", channel_id: channelId } })
    const task = await taskOf(answer.body.task_id)
    expect(task.execution_config).toMatchObject({ skills: ["integrations/github/review"], tools: ["get_pull_request"] })
    expect(task.execution_config.system_preamble).toContain(`Repository: ${REPO}`)
    expect(task.execution_config.system_preamble).toContain("Pull request: #7")
    expect(task.execution_config.system_preamble).toContain("Author: @alice")
    expect(task.execution_config.system_preamble).toContain(`https://github.test/${REPO}/pull/7`)
    await delivered(task.id)
    const first = requestFor("pr-seven-body")!
    const system = first.body.messages.filter((m: any) => m.role === "system").map((m: any) => m.content).join("\n")
    expect(system).toContain("pull_request (opened)")
    expect(system).toContain("Reviewing a pull request")
    expect(first.body.tools.map((t: any) => t.function.name)).toContain("get_pull_request")
    const toolResult = llm.requestsTo("/v1/chat/completions").flatMap((r) => r.body.messages).find((m: any) => m.role === "tool")
    const read = JSON.parse(toolResult.content)
    expect(read).toMatchObject({ number: 7, title: "PR 7", body: "adds widgets", truncated: true })
    expect(read.files).toHaveLength(150)
    expect(read.files.some((f: any) => f.patch_truncated)).toBe(true)
    expect(github.requests().some((r) => r.path.includes("/pulls/7/files") && r.path.includes("page=2"))).toBe(true)
    const comments = github.comments(REPO, 7)
    expect(comments).toHaveLength(1)
    expect(comments[0]!.body).toContain(REPLY)
    expect(comments[0]!.body.match(MARKER)?.[1]).toBe(answer.delivery)
  })

  it.each(
    [
      ["issues", { action: "opened", issue: issue(11, "issue-eleven-body") }, 11, "integrations/github/triage", []],
      [
        "issue_comment",
        { action: "created", issue: issue(12, "x"), comment: comment("@cairn-bot comment-twelve-body") },
        12,
        "integrations/github/triage",
        []
      ],
      [
        "pull_request_review",
        { action: "submitted", pull_request: pull(13, "x"), review: { ...comment("review-thirteen-body"), state: "changes_requested" } },
        13,
        "integrations/github/review",
        ["get_pull_request"]
      ],
      [
        "pull_request_review_comment",
        {
          action: "created",
          pull_request: pull(14, "x"),
          comment: { ...comment("review-comment-fourteen-body"), path: "src/a.ts", line: 3, diff_hunk: "@@ -1 +1 @@" }
        },
        14,
        "integrations/github/review",
        ["get_pull_request"]
      ]
    ] as const
  )("%s makes one task with its config and one comment", async (event, payload, number, skill, tools) => {
    const before = (await tasks()).length
    const answer = await deliver(event, { ...payload, repository: repository(), sender: user("carol") })
    expect(answer).toMatchObject({ status: 200, body: { status: "queued" } })
    const task = await taskOf(answer.body.task_id)
    expect(task.execution_config).toMatchObject({ skills: [skill], tools: [...tools] })
    expect(task.execution_config.system_preamble).toContain(`${event} (${payload.action})`)
    expect(task.execution_config.system_preamble).toContain(`#${number}`)
    await delivered(task.id)
    expect(await tasks()).toHaveLength(before + 1)
    const comments = github.comments(REPO, number)
    expect(comments).toHaveLength(1)
    expect(comments[0]!.body.match(MARKER)?.[1]).toBe(answer.delivery)
  })

  it("refuses a bad signature (401, nothing stored) and ignores a redelivery", async () => {
    const before = (await tasks()).length
    const forged = await deliver("issues", { action: "opened", issue: issue(20, "forged"), repository: repository() }, { secret: "wrong" })
    expect(forged.status).toBe(401)
    expect(await tasks()).toHaveLength(before)
    const first = await deliver("issues", { action: "opened", issue: issue(21, "issue-twenty-one"), repository: repository() })
    expect(first.body.status).toBe("queued")
    await delivered(first.body.task_id)
    const again = await deliver("issues", { action: "opened", issue: issue(21, "issue-twenty-one"), repository: repository() }, {
      delivery: first.delivery
    })
    expect(again).toMatchObject({ status: 200, body: { status: "duplicate" } })
    expect(await tasks()).toHaveLength(before + 1)
    expect(github.comments(REPO, 21)).toHaveLength(1)
    expect(github.comments(REPO, 20)).toHaveLength(0)
  })

  it("posts no second comment when the retry finds the one a 502 hid", async () => {
    for (let i = 0; i < 120; i++) github.addComment(REPO, 30, `older comment ${i}`)
    github.failAfterStoring(1, 502)
    const answer = await deliver("issues", { action: "opened", issue: issue(30, "issue-thirty"), repository: repository() })
    await delivered(answer.body.task_id)
    const task = await taskOf(answer.body.task_id)
    expect(task.delivery_attempts).toBeGreaterThanOrEqual(2)
    const ours = github.comments(REPO, 30).filter((c) => MARKER.test(c.body))
    expect(ours).toHaveLength(1)
    expect(github.requests().some((r) => r.path.includes("/issues/30/comments") && r.path.includes("page=2"))).toBe(true)
  })

  it("ignores an unbound repository, the bot's own comment and a comment without a mention", async () => {
    const before = (await tasks()).length
    const unbound = await deliver("issues", { action: "opened", issue: issue(40, "x"), repository: repository("acme/other") })
    expect(unbound).toMatchObject({ status: 200, body: { status: "ignored", reason: "unbound" } })
    const own = await deliver("issue_comment", {
      action: "created",
      issue: issue(41, "x"),
      comment: comment("@cairn-bot as I said", github.login),
      repository: repository(),
      sender: user(github.login)
    })
    expect(own).toMatchObject({ status: 200, body: { status: "ignored", reason: "own account" } })
    const quiet = await deliver("issue_comment", {
      action: "created",
      issue: issue(42, "x"),
      comment: comment("no call here"),
      repository: repository()
    })
    expect(quiet).toMatchObject({ status: 200, body: { status: "ignored", reason: "not mentioned" } })
    const closed = await deliver("issues", { action: "closed", issue: issue(43, "x"), repository: repository() })
    expect(closed).toMatchObject({ status: 200, body: { status: "ignored" } })
    const ping = await deliver("ping", { zen: "Keep it logically awesome." })
    expect(ping).toMatchObject({ status: 200, body: { status: "ok" } })
    expect(await tasks()).toHaveLength(before)
  })

  it("remembers a delivery across a restart", async () => {
    const first = await deliver("issues", { action: "opened", issue: issue(50, "issue-fifty"), repository: repository() })
    expect(first.body.status).toBe("queued")
    await delivered(first.body.task_id)
    await server.close()
    server = await startServer({ backend, db, env: serverEnv() })
    const again = await deliver("issues", { action: "opened", issue: issue(50, "issue-fifty"), repository: repository() }, {
      delivery: first.delivery
    })
    expect(again).toMatchObject({ status: 200, body: { status: "duplicate" } })
    expect(github.comments(REPO, 50)).toHaveLength(1)
  })

  it("answers ping, status and diagnose", async () => {
    expect(await json(await server.request("/integrations/github/ping"))).toMatchObject({ status: "ok", integration: "github" })
    const status = await json(await server.request("/integrations/github/status"))
    expect(status).toMatchObject({
      webhook_secret_set: true,
      token_set: true,
      bot_login: github.login,
      repositories: [{ repository: REPO }]
    })
    const diagnosis = await json(await server.request("/integrations/github/diagnose"))
    expect(diagnosis).toMatchObject({ ready: true, checks: { meta: "pass", dispatcher: "pass", credentials: "pass", bindings: "pass" } })
  })
})
