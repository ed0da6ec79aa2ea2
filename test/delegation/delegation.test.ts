/**
 * Delegation posts the delegated bot's answer where the conversation is, through that dispatcher's
 * `postMessage`, shown as the bot that answered (spec, "Extension point contracts": `post_message`
 * "is used for delegation"; integration metadata's `user_attribution` and display-name resolver).
 * On both databases, against the real fixture servers: the fake Slack Web API and the bridge's chat
 * server. Where the post goes, each case one rule of tasks/delivery/Delegated.ts:
 * - a channel bound to Slack (an integration written against the SDK alone: its metadata's
 *   `dispatch_config` rule for a bound channel, `user_attribution`, `display_name`);
 * - the request's own dispatch (a chat platform's thread);
 * - the session's `dispatch_config`;
 * - the bridge: a chat message comes in by webhook, its run delegates, the chat gets the answer
 *   (no per-message sender name in a chat: the name leads the text), then the run's own.
 * A conversation that reaches no dispatcher posts nothing; a stateless turn neither. Metadata
 * whose rule is not a function fails its integration's load.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { type FakeChatServer, startFakeChatServer } from "../fixtures/chatServer.ts"
import { type FakeLlm, startFakeLlm } from "../fixtures/fakeLlm.ts"
import { type FakeSlack, startFakeSlack } from "../fixtures/fakeSlack.ts"
import { backends, createTestDatabase, type TestDatabase } from "../support/database.ts"
import { waitFor, writeIntegration } from "../support/integrations.ts"
import { json, startServer, type TestServer } from "../support/server.ts"

const SLACK_TOKEN = "xoxb-test-token-delegation-0123"
const WEBHOOK_TOKEN = "webhook-token-delegation-0123"
const CHAT = "iMessage;-;+15550077"
const ANSWER = "Oslo is the capital."

/** A Slack integration in the shape an author writes it: the SDK's plain objects, nothing imported. */
const slackIntegration = {
  "setup.ts": `export const SETUP = { env_vars: [{ key: "SLACK_BOT_TOKEN", secret: true, description: "The bot token" }] }\n`,
  "hooks.ts": `export default (cairn) => {
  cairn.registerMetadata({
    integration_type: "slack",
    client_id_prefix: "slack:",
    dispatch_type: "chatplatform",
    dispatch_config: async (target) => ({ channel_id: target.external_id, token: await cairn.settings.get("SLACK_BOT_TOKEN") }),
    user_attribution: (userId, speaker) => ({ username: speaker.name + " (bot)", icon_url: "https://avatars.example/" + userId + ".png" }),
    display_name: (clientId) => "#" + clientId.slice("slack:".length).toLowerCase()
  })
}
`
}

/** The lead asks the researcher; the researcher answers; the lead answers with it. */
const scriptDelegation = (llm: FakeLlm) =>
  llm.script(
    { toolCalls: [{ name: "delegate_to_bot", arguments: JSON.stringify({ bot_id: "researcher", message: "Capital of Norway?" }) }] },
    { text: ANSWER },
    { text: "The researcher says Oslo." }
  )

describe.each(backends)("delegation posts through the conversation's dispatcher (%s)", (backend) => {
  let llm: FakeLlm
  let slack: FakeSlack
  let chat: FakeChatServer
  let db: TestDatabase
  let server: TestServer
  let dirs: string

  const call = async (method: string, url: string, body?: unknown, status = 200) => {
    const response = await server.request(url, { method, ...(body === undefined ? {} : { body: JSON.stringify(body) }) })
    const answer = await json(response)
    expect(response.status, JSON.stringify(answer)).toBe(status)
    return answer
  }
  const channelWith = async (name: string, binding?: { integration_type: string; client_id: string }) => {
    const channel = await call("POST", "/api/v1/admin/channels", { name, bot_id: "lead" }, 201)
    if (binding) await call("POST", `/api/v1/channels/${channel.id}/integrations`, binding, 201)
    return channel.id as string
  }
  const postsTo = (channel: string) => slack.posts.filter((p) => p.channel === channel)

  beforeAll(async () => {
    dirs = fs.mkdtempSync(path.join(os.tmpdir(), "cairn-delegation-"))
    writeIntegration(dirs, "slackbound", slackIntegration)
    writeIntegration(dirs, "badrule", {
      "hooks.ts":
        `export default (cairn) => cairn.registerMetadata({ integration_type: "badrule", client_id_prefix: "badrule:", dispatch_config: "chat" })\n`
    })
    llm = await startFakeLlm()
    slack = await startFakeSlack([SLACK_TOKEN])
    chat = await startFakeChatServer()
    db = await createTestDatabase(backend)
    server = await startServer({
      backend,
      db,
      env: {
        OPENAI_BASE_URL: llm.url,
        OPENAI_API_KEY: "sk-test-fake-key-1234567890",
        DEFAULT_MODEL: "fake-model",
        LLM_MAX_RETRIES: "0",
        SLACK_API_BASE_URL: slack.url,
        SLACK_BOT_TOKEN: SLACK_TOKEN,
        INTEGRATION_DIRS: dirs,
        DISPATCH_RETRY_BASE_MS: "200",
        TASK_POLL_MS: "50"
      }
    })
    await call("POST", "/api/v1/admin/bots", { id: "researcher", name: "Researcher", system_prompt: "You research." }, 201)
    // A chat's message is outside content: asking another bot is allowed without a person's approval.
    await call(
      "POST",
      "/api/v1/admin/bots",
      { id: "lead", name: "Lead", delegate_bots: ["researcher"], tool_policies: { delegate_to_bot: "allow" } },
      201
    )
    await call("PUT", "/api/v1/admin/integrations/msgbridge/settings", {
      MSGBRIDGE_SERVER_URL: chat.url,
      MSGBRIDGE_PASSWORD: chat.password,
      MSGBRIDGE_WEBHOOK_TOKEN: WEBHOOK_TOKEN,
      MSGBRIDGE_SEND_TIMEOUT_MS: "2000"
    })
  })
  afterAll(async () => {
    await server?.close()
    await db?.drop()
    await Promise.all([llm?.close(), slack?.close(), chat?.close()])
    if (dirs) fs.rmSync(dirs, { recursive: true, force: true })
  })
  beforeEach(() => llm.reset())

  it("a channel bound to Slack: the integration's rule finds the channel, its attribution shows the bot that answered", async () => {
    const channelId = await channelWith("desk", { integration_type: "slack", client_id: "slack:C0DESK" })
    scriptDelegation(llm)
    const body = await call("POST", "/chat", { message: "Ask the researcher", channel_id: channelId, bot_id: "lead" })
    expect(body.response).toBe("The researcher says Oslo.")
    const [post] = await waitFor(() => (postsTo("C0DESK").length > 0 ? postsTo("C0DESK") : undefined), "the delegated post")
    expect(post).toMatchObject({ token: SLACK_TOKEN, text: ANSWER, thread_ts: undefined })
    expect(post!.body).toMatchObject({
      username: "Researcher (bot)",
      icon_url: "https://avatars.example/researcher.png",
      metadata: {
        event_type: "cairn_message",
        event_payload: { delegation: { target_bot: "researcher", asked_by: "lead", conversation: "#c0desk" } }
      }
    })
    // Only the delegated answer: a chat from the API is answered to its caller, not mirrored.
    expect(postsTo("C0DESK")).toHaveLength(1)
  })

  it("the request's own dispatch: the answer goes into its thread, before the run's own result", async () => {
    scriptDelegation(llm)
    await call("POST", "/chat", {
      message: "Ask the researcher",
      bot_id: "lead",
      client_id: `delegation-thread-${backend}`,
      dispatch_type: "chatplatform",
      dispatch_config: { channel_id: "C0THREAD", token: SLACK_TOKEN, thread_ts: "1700000000.000100" }
    })
    const posts = await waitFor(() => (postsTo("C0THREAD").length >= 2 ? postsTo("C0THREAD") : undefined), "both posts")
    expect(posts.map((p) => [p.text, p.thread_ts, p.body.username ?? null])).toEqual([
      [ANSWER, "1700000000.000100", "Researcher (bot)"],
      ["The researcher says Oslo.", "1700000000.000100", null]
    ])
    // No binding named the conversation: no display name.
    expect((posts[0]!.body as any).metadata.event_payload.delegation).toEqual({
      target_bot: "researcher",
      asked_by: "lead",
      session_id: expect.any(String)
    })
  })

  it("the session's dispatch_config names the dispatcher", async () => {
    const session = await call("POST", "/api/v1/sessions", {
      bot_id: "lead",
      client_id: `delegation-session-${backend}`,
      dispatch_config: { dispatch_type: "chatplatform", channel_id: "C0SESSION", token: SLACK_TOKEN }
    })
    scriptDelegation(llm)
    await call("POST", "/chat", { message: "Ask the researcher", bot_id: "lead", session_id: session.session_id })
    const [post] = await waitFor(() => (postsTo("C0SESSION").length > 0 ? postsTo("C0SESSION") : undefined), "the post")
    expect(post).toMatchObject({ token: SLACK_TOKEN, text: ANSWER })
    expect(post!.body.username).toBe("Researcher (bot)")
  })

  it("the bridge: a chat message's run delegates, the chat gets the answer under the bot's name, then the run's", async () => {
    const channelId = await channelWith("family chat", { integration_type: "msgbridge", client_id: `msgbridge:${CHAT}` })
    scriptDelegation(llm)
    const message = chat.receive({ chatGuid: CHAT, text: "what is the capital of Norway?" })
    const hook = await chat.webhook(
      `${server.baseUrl}/integrations/msgbridge/webhook?token=${WEBHOOK_TOKEN}`,
      "new-message",
      message
    )
    expect(hook.status).toBe(200)
    expect(hook.body.channels.find((c: any) => c.channel_id === channelId)).toMatchObject({ action: "run" })
    const sends = await waitFor(
      () => (chat.sends().filter((s) => s.chatGuid === CHAT).length >= 2 ? chat.sends().filter((s) => s.chatGuid === CHAT) : undefined),
      "both sends"
    )
    // The bridge registered no attribution: the bot's own name, in the text.
    expect(sends.map((s) => s.message)).toEqual([`Researcher: ${ANSWER}`, "The researcher says Oslo."])
  })

  it("refuses metadata whose rule is not a function: that integration does not load", async () => {
    const { integrations } = await call("GET", "/api/v1/admin/integrations")
    const bad = integrations.find((i: { id: string }) => i.id === "badrule")
    expect(bad).toMatchObject({ status: "failed" })
    expect(bad.error).toContain("dispatch_config must be a function")
    expect(integrations.find((i: { id: string }) => i.id === "slackbound").status).not.toBe("failed")
  })

  it("a conversation that reaches no dispatcher, and a stateless turn, post nothing", async () => {
    const before = slack.posts.length
    const sendsBefore = chat.sends().length
    const channelId = await channelWith("web only")
    scriptDelegation(llm)
    const body = await call("POST", "/chat", { message: "Ask the researcher", channel_id: channelId, bot_id: "lead" })
    expect(body.response).toBe("The researcher says Oslo.")
    scriptDelegation(llm)
    const completion = await call("POST", "/v1/chat/completions", {
      model: "lead",
      messages: [{ role: "user", content: "Ask the researcher" }]
    })
    expect(completion.choices[0].message.content).toBe("The researcher says Oslo.")
    await new Promise((resolve) => setTimeout(resolve, 300))
    expect(slack.posts.length).toBe(before)
    expect(chat.sends().length).toBe(sendsBefore)
  })
})
