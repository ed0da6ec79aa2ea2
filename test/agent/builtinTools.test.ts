/**
 * The built-in tools, each called by the fake LLM in a turn through `/chat`: workspace files (a
 * traversal refused), document search, notes that survive a restart, todos, fetch_url (a private
 * address refused). A bot gets only the tools it lists; a long tool result reaches the model cut
 * and is stored whole.
 */
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type FakeLlm, startFakeLlm } from "../fixtures/fakeLlm.ts"
import { backends, createTestDatabase, type TestDatabase } from "../support/database.ts"
import { json, startServer, type TestServer } from "../support/server.ts"

describe.each(backends)("built-in tools in a turn (%s)", (backend) => {
  let llm: FakeLlm
  let server: TestServer
  let page: http.Server
  let pageUrl: string
  let channelId: string
  // Kept across the restart test: a server closed with its own database would drop it.
  let db: TestDatabase
  const env = () => ({
    OPENAI_BASE_URL: llm.url,
    OPENAI_API_KEY: "sk-tools-test",
    DEFAULT_MODEL: "fake-model",
    LLM_MAX_RETRIES: "0",
    FETCH_ALLOWED_HOSTS: "127.0.0.1",
    // Only a cancel can end a fetch of the page that never answers.
    FETCH_TIMEOUT_SECONDS: "600",
    TOOL_RESULT_MAX_CHARS: "2000"
  })

  /** A promise and what settles it. */
  const signal = () => {
    let resolve = () => {}
    const promise = new Promise<void>((settle) => (resolve = settle))
    return { promise, resolve }
  }
  /** The page that never answers: when a fetch of it began, and when its connection closed. */
  let hang = { requested: signal(), closed: signal() }

  beforeAll(async () => {
    llm = await startFakeLlm({ defaultReply: { text: "Done." } })
    page = http.createServer((req, res) => {
      if (req.url === "/hang") {
        const { requested, closed } = hang
        req.socket.on("close", () => closed.resolve())
        requested.resolve()
      } else if (req.url === "/article") {
        res.writeHead(200, { "content-type": "text/html; charset=utf-8" })
        res.end(
          "<html><head><style>p{}</style><script>var secret = 1</script></head><body><h1>Lighthouses</h1><p>The oldest one is in <a href='/egypt'>Alexandria</a>.</p></body></html>"
        )
      } else if (req.url === "/moved") {
        res.writeHead(302, { location: "/article" })
        res.end()
      } else {
        res.writeHead(404)
        res.end()
      }
    })
    await new Promise<void>((resolve) => page.listen(0, "127.0.0.1", resolve))
    pageUrl = `http://127.0.0.1:${(page.address() as AddressInfo).port}`
    db = await createTestDatabase(backend, { migrated: true })
    server = await startServer({ backend, env: env(), db })
    const bot = await server.request("/api/v1/admin/bots", {
      method: "POST",
      // One channel for every test: once a page or a document is in its history, `untrusted_policy`
      // would hold the write and egress tools tested here (test/security/ tests that policy).
      body: JSON.stringify({
        id: "worker",
        name: "Worker",
        tools: ["@files", "@documents", "@memory", "@todos", "@web"],
        untrusted_policy: "allow"
      })
    })
    expect(bot.status).toBe(201)
    const channel = await json(
      await server.request("/api/v1/admin/channels", {
        method: "POST",
        body: JSON.stringify({ name: "desk", bot_id: "worker", workspace_enabled: true })
      })
    )
    channelId = channel.id
  })
  afterAll(async () => {
    await server?.close()
    await db?.drop()
    await llm?.close()
    page?.close()
  })

  /** One turn in which the model calls `name` with `args`: answers the result the model was given. */
  const call = async (name: string, args: Record<string, unknown>, target: Record<string, unknown> = { channel_id: channelId }) => {
    llm.script({ toolCalls: [{ name, arguments: JSON.stringify(args) }] }, { text: "Done." })
    const response = await server.request("/chat", { method: "POST", body: JSON.stringify({ message: `use ${name}`, ...target }) })
    expect(response.status).toBe(200)
    const messages = llm.requestsTo("/v1/chat/completions").at(-1)!.body.messages
    return messages.at(-1).content as string
  }
  const offered = () => (llm.requestsTo("/v1/chat/completions").at(-1)!.body.tools ?? []).map((t: any) => t.function.name)

  it("offers the bot exactly the tools its groups name, and lists them in the admin tool list", async () => {
    await call("list_files", {})
    expect(offered().sort()).toEqual(
      [
        "append_file",
        "fetch_url",
        "list_files",
        "read_file",
        "recall",
        "remember",
        "search_documents",
        "search_files",
        "todos",
        "write_file"
      ].sort()
    )
    const listed = (await json(await server.request("/api/v1/admin/tools"))) as Array<
      { tool_name: string; source_integration: string | null }
    >
    expect(listed.filter((t) => ["read_file", "fetch_url", "remember", "todos"].includes(t.tool_name))).toHaveLength(4)
  })

  it("writes, appends, reads by lines, lists and searches the channel's workspace, and refuses a traversal", async () => {
    expect(await call("write_file", { path: "notes/plan.md", content: "line one\nline two\n" })).toBe("Created notes/plan.md (18 bytes)")
    expect(await call("append_file", { path: "notes/plan.md", content: "line three about Lighthouses\n" })).toMatch(
      /^Appended to notes\/plan\.md/
    )
    expect(await call("read_file", { path: "notes/plan.md", start_line: 2, end_line: 3 })).toBe("line two\nline three about Lighthouses")
    expect(await call("list_files", {})).toBe("notes/plan.md (47 bytes)")
    expect(await call("search_files", { query: "lighthouses" })).toBe("notes/plan.md:3: line three about Lighthouses")
    expect(await call("search_files", { query: "^line (one|two)$", regex: true })).toBe(
      "notes/plan.md:1: line one\nnotes/plan.md:2: line two"
    )
    const traversal = await call("read_file", { path: "../../../etc/passwd" })
    expect(traversal).toMatch(/^Error: /)
    expect(traversal).not.toContain("root:")
    const events = await json(await server.request(`/api/v1/channels/${channelId}/workspace/files`))
    expect(events.files.map((f: { path: string }) => f.path)).toEqual(["notes/plan.md"])
  })

  it("searches the documents, never showing notes", async () => {
    const stored = await server.request("/api/v1/documents", {
      method: "POST",
      body: JSON.stringify({
        title: "Lighthouse keeping",
        content: "Keepers trimmed the wicks of the lamps every night.",
        integration_id: "library"
      })
    })
    expect(stored.status).toBeLessThan(300)
    await call("remember", { note: "Lighthouse keepers are the user's favourite topic" })
    const found = await call("search_documents", { query: "lighthouse keepers wicks" })
    expect(found).toMatch(/^\[1\] Lighthouse keeping \(library/)
    expect(found).not.toContain("favourite topic")
    expect(await call("search_documents", { query: "favourite", integration_id: "notes:worker" })).toMatch(
      /^Error: Notes are read with recall/
    )
  })

  it("keeps todos: create, list, complete", async () => {
    const created = await call("todos", { action: "create", title: "Buy lamp oil", due: "2026-12-01" })
    const id = /^Created ([0-9a-f-]{36}) \[open\] Buy lamp oil \(due 2026-12-01T00:00:00\.000Z\)$/.exec(created)?.[1]
    expect(id, created).toBeDefined()
    expect(await call("todos", { action: "list" })).toContain(`${id} [open] Buy lamp oil`)
    expect(await call("todos", { action: "complete", id })).toMatch(/^Completed .* \[done\] Buy lamp oil/)
    expect(await call("todos", { action: "list" })).toBe("No open todos.")
    expect(await call("todos", { action: "list", status: "done" })).toContain(id!)
    expect(await call("todos", { action: "complete", id: "00000000-0000-4000-8000-000000000000" })).toMatch(/^Error: No todo/)
  })

  it("fetches a public page as text, says where a redirect goes, and refuses private addresses", async () => {
    const article = await call("fetch_url", { url: `${pageUrl}/article` })
    expect(article).toMatch(/answered 200 \(text\/html\)/)
    expect(article).toContain("LIGHTHOUSES")
    expect(article).toContain("Alexandria")
    expect(article).not.toContain("secret")
    expect(await call("fetch_url", { url: `${pageUrl}/moved` })).toMatch(/redirects \(302\) to http:\/\/127\.0\.0\.1:\d+\/article/)
    for (const url of ["http://169.254.169.254/latest/meta-data/", "http://10.1.2.3/", "file:///etc/passwd"]) {
      const refused = await call("fetch_url", { url })
      expect(refused, url).toMatch(/^Error: /)
      expect(refused, url).toMatch(/private or loopback|must be http or https/)
    }
  })

  it("gives a bot only the tools it lists: the default bot cannot write files", async () => {
    const refused = await call("write_file", { path: "x.md", content: "x" }, { client_id: "no-tools" })
    expect(refused).toBe("Error: the tool write_file is not available in this conversation.")
    expect(offered()).not.toContain("write_file")
  })

  it("stops a fetch_url when its run is cancelled: the page's connection closes", async () => {
    hang = { requested: signal(), closed: signal() }
    // One reply only: the cancelled run never asks for a second, which would be left for the next test.
    llm.script({ toolCalls: [{ name: "fetch_url", arguments: JSON.stringify({ url: `${pageUrl}/hang` }) }] })
    const clientId = `hang-${backend}`
    const chat = server.request("/chat", {
      method: "POST",
      body: JSON.stringify({ message: "fetch the stuck page", bot_id: "worker", client_id: clientId })
    })
    await hang.requested.promise
    const cancel = await server.request("/chat/cancel", { method: "POST", body: JSON.stringify({ client_id: clientId, bot_id: "worker" }) })
    expect(await json(cancel)).toMatchObject({ cancelled: true })
    // The fetch's own limit is ten minutes away: only the cancel closes the connection.
    await hang.closed.promise
    await (await chat).body?.cancel()
  })

  it("cuts a long tool result for the model with a note, and stores it whole", async () => {
    const long = "abcdefghij".repeat(500)
    await call("write_file", { path: "long.txt", content: long })
    const seen = await call("read_file", { path: "long.txt" })
    expect(seen.startsWith(long.slice(0, 2000))).toBe(true)
    expect(seen).toMatch(/\[Tool result cut for the model: 5000 characters, the first 2000 shown/)
    const channel = await json(await server.request(`/api/v1/channels/${channelId}`))
    const messages = await json(await server.request(`/api/v1/sessions/${channel.active_session_id}/messages`))
    expect(messages.filter((m: { role: string }) => m.role === "tool").at(-1).content).toBe(long)
  })

  it("recalls notes after a restart", async () => {
    await call("remember", { note: "The user's cat is called Miso", title: "Cat" })
    await call("remember", { note: "This desk orders lamp oil on Mondays", scope: "channel" })
    await server.close()
    server = await startServer({ backend, env: env(), db })
    const recalled = await call("recall", { query: "cat called" })
    expect(recalled).toMatch(/Cat \(notes:worker,/)
    expect(recalled).toContain("Miso")
    expect(await call("recall", { query: "lamp oil Mondays" })).toContain(`notes:worker:${channelId}`)
  })
})
