/**
 * `cairn chat` driven as a person drives it, in a real pseudo-terminal (tmux), against a real Cairn
 * and the fake LLM: a streamed answer with a tool call, an approval answered, Ctrl+C stopping a run
 * (the server's run ends `cancelled`) and a second Ctrl+C quitting, `/switch` and `/history`, a
 * `shell_exec` client tool confirmed and its output returned to the model, a voice file transcribed
 * into the prompt, and a key made by `cairn keys create --preset "Chat Client"` used to chat.
 */
import { randomUUID } from "node:crypto"
import * as fs from "node:fs"
import * as net from "node:net"
import * as path from "node:path"
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest"
import { startWithFakeLlm, stopWithFakeLlm } from "../compat/harness.ts"
import type { FakeLlm } from "../fixtures/fakeLlm.ts"
import { tempDir } from "../support/database.ts"
import { runCli, type TestServer } from "../support/server.ts"
import { spokenWav } from "../support/speech.ts"
import { readSse } from "../support/sse.ts"
import { startPty, type Pty } from "../support/terminal.ts"

describe("cairn chat in a terminal", () => {
  let server: TestServer
  let llm: FakeLlm
  let home: string
  const open: Array<Pty> = []

  /** `cairn chat` with this server and the static key unless `args` say otherwise; no config file of the user's. */
  const chat = (...args: Array<string>) => {
    const pty = startPty(["chat", "--url", server.baseUrl, ...(args.includes("--key") ? [] : ["--key", server.apiKey]), ...args], { XDG_CONFIG_HOME: home })
    open.push(pty)
    return pty
  }
  const lastCompletion = () => llm.requestsTo("/v1/chat/completions").at(-1)!.body as { messages: Array<{ role: string; content: unknown }> }

  beforeAll(async () => {
    ;({ llm, server } = await startWithFakeLlm("pglite", "Done."))
    home = tempDir("cairn-cli-home-")
    for (const bot of [
      { id: "guarded", name: "Guarded", tools: ["current_time"], tool_policies: { current_time: "require_approval" } },
      { id: "helper", name: "Helper", client_tools: ["shell_exec"] },
      // Its own bot, so /sessions lists only that test's sessions.
      { id: "keeper", name: "Keeper" }
    ]) {
      expect((await server.request("/api/v1/admin/bots", { method: "POST", body: JSON.stringify(bot) })).status).toBe(201)
    }
  })
  afterEach(() => {
    for (const pty of open.splice(0)) pty.close()
  })
  afterAll(async () => {
    await stopWithFakeLlm({ server, llm })
  })

  it("streams the answer as it comes and shows a tool call with its duration", async () => {
    llm.script({ toolCalls: [{ name: "current_time", arguments: "{}" }] }, { textChunks: ["It is ", "tea time."], chunkDelayMs: 1500 })
    const pty = chat()
    await pty.waitFor("you›")
    pty.typeLine("what time is it?")
    const partial = await pty.waitFor("default› It is")
    // The first part is on screen while the second is still on its way: streamed, not printed at the end.
    expect(partial).not.toContain("tea time.")
    const screen = await pty.waitFor("It is tea time.")
    expect(screen).toMatch(/⚙ current_time \{\}/)
    expect(screen).toMatch(/✓ current_time \d+ ms/)
  })

  it("asks before a tool that needs approval, and sends the decision", async () => {
    llm.script({ toolCalls: [{ name: "current_time", arguments: "{}" }] }, { text: "Allowed, and here it is." })
    const sessionId = randomUUID()
    const pty = chat("--bot", "guarded", "--session", sessionId)
    await pty.waitFor("you›")
    pty.typeLine("the time please")
    await pty.waitFor("Allow this tool call? [y/N]")
    expect(pty.screen()).toContain("approval needed: current_time")
    pty.typeLine("y")
    const screen = await pty.waitFor("Allowed, and here it is.")
    expect(screen).toContain("current_time approved")
    const approvals = await server.call((client) => client.chat.approvals({ urlParams: { session_id: sessionId, status: "approved" } }))
    expect(approvals.map((a) => a.tool)).toEqual(["current_time"])
  })

  it("stops the run on Ctrl+C (the server's run ends cancelled), and quits on a second Ctrl+C", async () => {
    llm.script({ hang: true })
    const sessionId = randomUUID()
    const pty = chat("--session", sessionId)
    await pty.waitFor("you›")
    const before = llm.requestsTo("/v1/chat/completions").length
    pty.typeLine("take your time")
    for (let i = 0; i < 100 && llm.requestsTo("/v1/chat/completions").length === before; i++) await new Promise((r) => setTimeout(r, 50))
    pty.press("C-c")
    await pty.waitFor("the run was stopped")
    const controller = new AbortController()
    const events = await readSse(await server.request(`/api/v1/sessions/${sessionId}/stream`, { signal: controller.signal }), controller).rest()
    expect(events.at(-1)!.data.type).toBe("cancelled")
    await pty.waitFor(/you› \s*$/m)
    pty.press("C-c")
    expect(await pty.waitForExit(), pty.screen()).toBe(0)
  })

  it("survives a dropped connection mid-answer: rejoins the run, and the text goes on without a gap or a repeat", async () => {
    // A proxy between the CLI and the server, whose connections the test can cut.
    const sockets = new Set<net.Socket>()
    const proxy = net.createServer((client) => {
      const upstream = net.connect(server.port, "127.0.0.1")
      for (const socket of [client, upstream]) {
        sockets.add(socket)
        socket.on("close", () => sockets.delete(socket))
        socket.on("error", () => {})
      }
      client.pipe(upstream).pipe(client)
    })
    await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve))
    try {
      llm.script({ textChunks: ["one ", "two ", "three ", "four."], chunkDelayMs: 800 })
      const pty = startPty(["chat", "--url", `http://127.0.0.1:${(proxy.address() as net.AddressInfo).port}`, "--key", server.apiKey], { XDG_CONFIG_HOME: home })
      open.push(pty)
      await pty.waitFor("you›")
      pty.typeLine("count to four")
      await pty.waitFor("default› one")
      for (const socket of sockets) socket.destroy()
      const screen = await pty.waitFor("four.", 20_000)
      expect(screen).toContain("connection lost; rejoining the run")
      // The answer's lines, with the notice and the bot's prefixes taken out, read as one text.
      const answer = screen
        .slice(screen.indexOf("count to four") + "count to four".length)
        .split("\n")
        .filter((line) => !line.includes("connection lost") && !line.startsWith("you›"))
        .map((line) => line.replace(/^default› /, ""))
        .join("")
        .trim()
      expect(answer).toBe("one two three four.")
    } finally {
      proxy.close()
    }
  })

  it("lists sessions, switches back to an earlier one and shows its history", async () => {
    llm.script({ text: "First answer." }, { text: "Second answer." })
    const pty = chat("--bot", "keeper")
    await pty.waitFor("you›")
    pty.typeLine("the first question")
    await pty.waitFor("First answer.")
    pty.typeLine("/new")
    await pty.waitFor("new session")
    pty.typeLine("the second question")
    await pty.waitFor("Second answer.")
    pty.typeLine("/sessions")
    const listing = await pty.waitFor(/2\s+[0-9a-f]{8}\s+\S+ \S+\s+the first question/)
    expect(listing).toMatch(/\*\s+1\s+[0-9a-f]{8}\s+\S+ \S+\s+the second question/)
    pty.typeLine("/switch 2")
    await pty.waitFor("· the first question · bot keeper")
    pty.typeLine("/history")
    const history = await pty.waitFor(/you› the first question\nkeeper› First answer\.\nyou›/)
    expect(history.split("/history")[1]).not.toContain("the second question")
  })

  it("runs a shell_exec client tool once the user confirms, and returns its output to the model", async () => {
    llm.script({ toolCalls: [{ name: "shell_exec", arguments: JSON.stringify({ command: "echo cli-$((6*7))" }) }] }, { text: "It printed 42." })
    const pty = chat("--bot", "helper")
    await pty.waitFor("you›")
    pty.typeLine("run the sum")
    await pty.waitFor("Run this command on this machine? [y/N]")
    expect(pty.screen()).toContain("$ echo cli-$((6*7))")
    pty.typeLine("y")
    await pty.waitFor("It printed 42.")
    const tool = lastCompletion().messages.find((m) => m.role === "tool")!
    expect(tool.content).toBe("Exit status 0\ncli-42")
  })

  it("refuses a shell command the user declines", async () => {
    llm.script({ toolCalls: [{ name: "shell_exec", arguments: JSON.stringify({ command: "touch should-not-exist" }) }] }, { text: "Fine, I did not." })
    const pty = chat("--bot", "helper")
    await pty.waitFor("you›")
    pty.typeLine("make a file")
    await pty.waitFor("Run this command on this machine? [y/N]")
    pty.typeLine("n")
    await pty.waitFor("Fine, I did not.")
    expect(lastCompletion().messages.find((m) => m.role === "tool")!.content).toBe("The user declined to run this command.")
    expect(fs.existsSync(path.join(process.cwd(), "should-not-exist"))).toBe(false)
  })

  it("transcribes a voice file into the prompt, to edit and send", async () => {
    const sentence = "Remind me to water the plants"
    const wav = path.join(home, "note.wav")
    fs.writeFileSync(wav, spokenWav(sentence))
    llm.scriptTranscriptions({ text: sentence })
    llm.script({ text: "I will remind you." })
    const pty = chat()
    await pty.waitFor("you›")
    pty.typeLine(`/voice ${wav}`)
    await pty.waitFor(`you› ${sentence}`)
    pty.typeLine(" tomorrow")
    await pty.waitFor("I will remind you.")
    expect(llm.requestsTo("/v1/audio/transcriptions").at(-1)!.body.file).toMatchObject({ type: "audio/wav" })
    const user = lastCompletion().messages.filter((m) => m.role === "user").at(-1)!
    expect(user.content).toBe(`${sentence} tomorrow`)
  })

  it("chats with a key made by `cairn keys create --preset \"Chat Client\"`", async () => {
    // Run asynchronously: the server answering it lives in this process.
    const created = JSON.parse(
      (await runCli(["keys", "create", "--preset", "Chat Client", "--url", server.baseUrl, "--key", server.apiKey, "--json"], { XDG_CONFIG_HOME: home })).stdout
    )
    expect(created.scopes).toEqual(expect.arrayContaining(["chat", "sessions:read", "bots:read"]))
    llm.script({ text: "Hello, scoped client." })
    const pty = chat("--key", created.key)
    await pty.waitFor("you›")
    pty.typeLine("hi")
    await pty.waitFor("default› Hello, scoped client.")
    pty.typeLine("/sessions")
    await pty.waitFor(/\*\s+1\s+[0-9a-f]{8}/)
  })
})
