/**
 * Where a bot's widget may be embedded, edited at runtime through the typed client (no restart),
 * and what `/widget/<bot>` answers a page on an origin that is not allowed; and the visitor's
 * conversation given back after a host page reload, on both databases.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { WidgetConversation } from "../../src/access/widget/Model.ts"
import { CreateBot } from "../../src/bots/Model.ts"
import { NotFound } from "../../src/contract/Errors.ts"
import { ChatRequest } from "../../src/intake/Model.ts"
import { createKey } from "../auth/helpers.ts"
import { type FakeLlm, fakeLlmEnv, startFakeLlm } from "../fixtures/fakeLlm.ts"
import { withDefaults } from "../support/client.ts"
import { backends } from "../support/database.ts"
import { startServer, type TestServer } from "../support/server.ts"

const botRequest = withDefaults(CreateBot)
const chatRequest = (message: string, clientId: string) => withDefaults(ChatRequest)({ message, bot_id: "helper", client_id: clientId })

const envOrigin = "https://everywhere.example.com"
const shop = "https://shop.example.com"

describe.each(backends)("widget embedding (%s)", (backend) => {
  let server: TestServer
  let llm: FakeLlm
  beforeAll(async () => {
    llm = await startFakeLlm()
    server = await startServer({ backend, env: { ...fakeLlmEnv(llm), WIDGET_EMBED_ORIGINS: envOrigin } })
    const botKey = await createKey(server, ["chat"])
    await server.call((client) => client.bots.create({ payload: botRequest({ id: "helper", name: "Helper", api_key_id: botKey.id }) }))
    await server.call((client) => client.bots.create({ payload: botRequest({ id: "other", name: "Other", api_key_id: botKey.id }) }))
  })
  afterAll(async () => {
    await server?.close()
    await llm?.close()
  })

  const page = (bot: string, origin?: string) =>
    server.request(`/widget/${bot}${origin ? `?origin=${encodeURIComponent(origin)}&theme=dark` : ""}`, { auth: null })

  it("keeps a bot's allowed origins in the database, editable at runtime, on top of WIDGET_EMBED_ORIGINS", async () => {
    const before = await server.call((client) => client.widget.settings({ path: { bot_id: "helper" } }))
    expect(before).toMatchObject({
      bot_id: "helper",
      allowed_origins: [],
      default_origins: [envOrigin],
      has_api_key: true,
      updated_at: null
    })

    // Not yet allowed: a page saying so, frameable anywhere, with no script in it.
    const refused = await page("helper", shop)
    expect(refused.status).toBe(200)
    const csp = refused.headers.get("content-security-policy")!
    expect(csp).toContain("frame-ancestors *")
    expect(csp).toContain("default-src 'none'")
    const text = await refused.text()
    expect(text).toContain("This chat is not available on this site")
    expect(text).toContain(shop)
    expect(text).not.toContain("<script")
    // The default origin is allowed for every bot.
    expect((await page("helper", envOrigin)).headers.get("content-security-policy")).toContain(`frame-ancestors ${envOrigin}`)

    const saved = await server.call((client) =>
      client.widget.setOrigins({ path: { bot_id: "helper" }, payload: { allowed_origins: [shop, shop, "http://127.0.0.1:8080"] } })
    )
    expect(saved.allowed_origins).toEqual([shop, "http://127.0.0.1:8080"])
    expect(saved.updated_at).toBeInstanceOf(Date)
    // The next page load sees it, with no restart; the other bot does not.
    const allowed = await page("helper", shop)
    expect(allowed.headers.get("content-security-policy")).toContain(`frame-ancestors ${envOrigin} ${shop} http://127.0.0.1:8080`)
    expect(await allowed.text()).toContain("<div id=\"root\"></div>")
    expect(await (await page("other", shop)).text()).toContain("This chat is not available on this site")
    // An escaped origin in the refusal: whatever the page claims is text, never markup.
    expect(await (await page("other", "https://x.example<script>")).text()).toContain("https://x.example&lt;script&gt;")

    // Removed again: refused on the next load.
    await server.call((client) => client.widget.setOrigins({ path: { bot_id: "helper" }, payload: { allowed_origins: [] } }))
    expect(await (await page("helper", shop)).text()).toContain("This chat is not available on this site")
  })

  it("refuses anything but an origin, an unknown bot, and a caller without bots:write", async () => {
    for (
      const bad of [
        "*",
        "https://shop.example.com/path",
        "shop.example.com",
        "https://Shop.example.com",
        "https://a.example 'unsafe-inline'"
      ]
    ) {
      const response = await server.request("/api/v1/admin/widgets/helper", {
        method: "PUT",
        body: JSON.stringify({ allowed_origins: [bad] })
      })
      expect(response.status).toBe(422)
      expect(JSON.stringify(await response.json())).toContain("Each origin is scheme, host and port")
    }
    await server.failsWith(NotFound, (client) => client.widget.settings({ path: { bot_id: "nobody" } }))
    await server.failsWith(NotFound, (client) => client.widget.setOrigins({ path: { bot_id: "nobody" }, payload: { allowed_origins: [] } }))
    const reader = await createKey(server, ["bots:read"])
    expect((await server.as(reader.key).call((client) => client.widget.settings({ path: { bot_id: "helper" } }))).bot_id).toBe("helper")
    const write = await server.request("/api/v1/admin/widgets/helper", {
      method: "PUT",
      auth: reader.key,
      body: JSON.stringify({ allowed_origins: [shop] })
    })
    expect(write.status).toBe(403)
  })

  it("gives a visitor's conversation back to the same widget and visitor only", async () => {
    llm.reset()
    llm.script({ text: "We open at nine." }, { text: "Until six." })
    const host = await createKey(server, ["bots:read", "chat"])
    const mint = (key: string, bot = "helper") =>
      server.as(key).call((client) => client.widget.mint({ payload: { source_bot_id: bot } })).then((minted) => minted.token)
    const token = await mint(host.key)
    const visitor = "widget:0123456789abcdef"
    const conversation = (as: string, clientId: string, bot = "helper") =>
      server.as(as).attempt((client) => client.widget.conversation({ urlParams: { bot_id: bot, client_id: clientId } }))

    expect(await server.as(token).call((client) => client.widget.conversation({ urlParams: { bot_id: "helper", client_id: visitor } })))
      .toEqual(new WidgetConversation({ session_id: null, lines: [] }))
    await server.as(token).call((client) => client.chat.chat({ payload: chatRequest("When do you open?", visitor) }))
    // A reload: the host mints a new token for the same widget; the visitor's lines come back.
    const again = await mint(host.key)
    const back = await server.as(again).call((client) =>
      client.widget.conversation({ urlParams: { bot_id: "helper", client_id: visitor } })
    )
    expect(back.session_id).not.toBeNull()
    expect(back.lines.map((line) => [line.role, line.text])).toEqual([["user", "When do you open?"], ["assistant", "We open at nine."]])
    // The next message goes to the same session: the model sees the earlier exchange.
    await server.as(again).call((client) => client.chat.chat({ payload: chatRequest("And close?", visitor) }))
    const sent = llm.requestsTo("/v1/chat/completions").at(-1)!.body.messages.map((message: { content: unknown }) =>
      JSON.stringify(message.content)
    )
    expect(sent.join(" ")).toContain("When do you open?")
    expect(sent.join(" ")).toContain("We open at nine.")

    // Another visitor, another site's widget (another minter), another bot: nothing of it.
    const other = await conversation(again, "widget:fedcba9876543210")
    expect(other._tag === "Right" && other.right.lines).toEqual([])
    const otherHost = await createKey(server, ["bots:read", "chat"])
    const foreign = await conversation(await mint(otherHost.key), visitor)
    expect(foreign._tag === "Right" && foreign.right.session_id).toBeNull()
    const wrongBot = await server.request(`/api/v1/widget/conversation?bot_id=other&client_id=${visitor}`, { auth: again })
    expect(wrongBot.status).toBe(403)
  })
})
