/**
 * `cairn chat` driven as a person drives it, in a real pseudo-terminal (tmux), against a real Cairn
 * and the fake LLM: a streamed answer with a tool call, an approval answered, Ctrl+C stopping a run
 * (the server's run ends `cancelled`) and a second Ctrl+C quitting, `/switch` and `/history`, a
 * `shell_exec` client tool confirmed and its output returned to the model, a voice file transcribed
 * into the prompt, and a key made by `cairn keys create --preset "Chat Client"` used to chat.
 */
import { spawn } from "node:child_process"
import { randomUUID } from "node:crypto"
import * as fs from "node:fs"
import * as net from "node:net"
import * as path from "node:path"
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest"
import { startWithFakeLlm, stopWithFakeLlm } from "../compat/harness.ts"
import type { FakeLlm } from "../fixtures/fakeLlm.ts"
import { tempDir } from "../support/database.ts"
import { json, runCli, type TestServer } from "../support/server.ts"
import { spokenWav } from "../support/speech.ts"
import { readSse } from "../support/sse.ts"
import { cairnBin, type Pty, startPty } from "../support/terminal.ts"
import { processStartMs, scaled } from "../support/time.ts"

// Each test starts `cairn chat` (a process start, with its deadline) and then talks with it.
describe("cairn chat in a terminal", { timeout: processStartMs + scaled(60_000) }, () => {
  let server: TestServer
  let llm: FakeLlm
  let home: string
  const open: Array<Pty> = []

  /** `cairn chat` with this server and the static key unless `args` say otherwise; no config file of the user's. */
  const chat = (...args: Array<string>) => {
    const pty = startPty(["chat", "--url", server.baseUrl, ...(args.includes("--key") ? [] : ["--key", server.apiKey]), ...args], {
      XDG_CONFIG_HOME: home
    })
    open.push(pty)
    return pty
  }
  const lastCompletion = () =>
    llm.requestsTo("/v1/chat/completions").at(-1)!.body as { messages: Array<{ role: string; content: unknown }> }

  beforeAll(async () => {
    ;({ llm, server } = await startWithFakeLlm("pglite", "Done."))
    home = tempDir("cairn-cli-home-")
    for (
      const bot of [
        { id: "guarded", name: "Guarded", tools: ["current_time"], tool_policies: { current_time: "require_approval" } },
        { id: "helper", name: "Helper", client_tools: ["shell_exec"] },
        // Its own bot, so /sessions lists only that test's sessions.
        { id: "keeper", name: "Keeper", tools: ["client_action"] }
      ]
    ) {
      expect((await server.request("/api/v1/admin/bots", { method: "POST", body: JSON.stringify(bot) })).status).toBe(201)
    }
  })
  afterEach(() => {
    for (const pty of open.splice(0)) pty.close()
    // A test that failed leaves none of its scripted answers to the next.
    llm.reset()
  })
  afterAll(async () => {
    await stopWithFakeLlm({ server, llm })
  })

  it("streams the answer as it comes and shows a tool call with its duration", async () => {
    llm.script({ toolCalls: [{ name: "current_time", arguments: "{}" }] }, { textChunks: ["It is ", "tea time."], chunkDelayMs: 1500 })
    const pty = chat()
    await pty.started("you›")
    pty.typeLine("what time is it?")
    const partial = await pty.waitFor("Cairn› It is")
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
    await pty.started("you›")
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
    await pty.started("you›")
    const before = llm.requestsTo("/v1/chat/completions").length
    pty.typeLine("take your time")
    for (let i = 0; i < 100 && llm.requestsTo("/v1/chat/completions").length === before; i++) await new Promise((r) => setTimeout(r, 50))
    pty.press("C-c")
    await pty.waitFor("the run was stopped")
    const controller = new AbortController()
    const events = await readSse(await server.request(`/api/v1/sessions/${sessionId}/stream`, { signal: controller.signal }), controller)
      .rest()
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
      const pty = startPty(["chat", "--url", `http://127.0.0.1:${(proxy.address() as net.AddressInfo).port}`, "--key", server.apiKey], {
        XDG_CONFIG_HOME: home
      })
      open.push(pty)
      await pty.started("you›")
      pty.typeLine("count to four")
      await pty.waitFor("Cairn› one")
      for (const socket of sockets) socket.destroy()
      const screen = await pty.waitFor("four.", 20_000)
      expect(screen).toContain("connection lost; rejoining the run")
      // The answer's lines, with the notice and the bot's prefixes taken out, read as one text.
      const answer = screen
        .slice(screen.indexOf("count to four") + "count to four".length)
        .split("\n")
        .filter((line) => !line.includes("connection lost") && !line.startsWith("you›"))
        .map((line) => line.replace(/^Cairn› /, ""))
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
    await pty.started("you›")
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
    const history = await pty.waitFor(/you› the first question\nKeeper› First answer\.\nyou›/)
    expect(history.split("/history")[1]).not.toContain("the second question")
  })

  it("runs a shell_exec client tool once the user confirms, and returns its output to the model", async () => {
    llm.script({ toolCalls: [{ name: "shell_exec", arguments: JSON.stringify({ command: "echo cli-$((6*7))" }) }] }, {
      text: "It printed 42."
    })
    const pty = chat("--bot", "helper")
    await pty.started("you›")
    pty.typeLine("run the sum")
    await pty.waitFor("Run this command on this machine? [y/N]")
    expect(pty.screen()).toContain("$ echo cli-$((6*7))")
    pty.typeLine("y")
    await pty.waitFor("It printed 42.")
    const tool = lastCompletion().messages.find((m) => m.role === "tool")!
    expect(tool.content).toBe("Exit status 0\ncli-42")
  })

  it("refuses a shell command the user declines", async () => {
    llm.script({ toolCalls: [{ name: "shell_exec", arguments: JSON.stringify({ command: "touch should-not-exist" }) }] }, {
      text: "Fine, I did not."
    })
    const pty = chat("--bot", "helper")
    await pty.started("you›")
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
    await pty.started("you›")
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
      (await runCli(["keys", "create", "--preset", "Chat Client", "--url", server.baseUrl, "--key", server.apiKey, "--json"], {
        XDG_CONFIG_HOME: home
      })).stdout
    )
    expect(created.scopes).toEqual(expect.arrayContaining(["chat", "sessions:read", "bots:read"]))
    llm.script({ text: "Hello, scoped client." })
    const pty = chat("--key", created.key)
    await pty.started("you›")
    pty.typeLine("hi")
    await pty.waitFor("Cairn› Hello, scoped client.")
    pty.typeLine("/sessions")
    await pty.waitFor(/\*\s+1\s+[0-9a-f]{8}/)
    // Two process starts: `cairn keys create`, then `cairn chat`.
  }, 2 * processStartMs + scaled(60_000))

  it("waits for a message queued behind a busy session, and shows its answer", async () => {
    // Another client's run holds the session for a few seconds; then the queued message runs.
    llm.script({ text: "The first answer.", delayMs: 4000 }, { textChunks: ["Your queued ", "answer."], chunkDelayMs: 100 })
    const sessionId = randomUUID()
    // The client is up before the session is taken, so its start (slow on a loaded machine) cannot outlast the hold.
    const pty = chat("--session", sessionId)
    await pty.started("you›")
    const busy = server.request("/chat", { method: "POST", body: JSON.stringify({ message: "hold the session", session_id: sessionId }) })
    for (let i = 0; i < 100 && llm.requestsTo("/v1/chat/completions").at(-1)?.body.messages.at(-1)?.content !== "hold the session"; i++) {
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
    pty.typeLine("and then this")
    await pty.waitFor(/queued \(session_busy\) as task [0-9a-f-]{36}/)
    // Its run is followed once it starts: the answer streams in like any other.
    await pty.waitFor("Cairn› Your queued answer.", 20_000)
    expect((await busy).status).toBe(200)
    // The queued stream carried the turn: the answer is shown once, not again from the task.
    await new Promise((resolve) => setTimeout(resolve, 1000))
    expect(pty.screen().split("Your queued answer.").length - 1).toBe(1)
  })

  it("carries out /bot, /model, /attach, /summarize and a client action the server sends", async () => {
    const png = path.join(home, "dot.png")
    fs.writeFileSync(
      png,
      Buffer.from("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==", "base64")
    )
    const pty = chat()
    await pty.started("you›")
    pty.typeLine("/bot")
    await pty.waitFor(/\* default\s+Cairn/)
    expect(pty.screen()).toMatch(/ keeper\s+Keeper/)
    pty.typeLine("/bot keeper")
    await pty.waitFor("now talking to keeper")
    pty.typeLine("/model fake-large")
    await pty.waitFor("model: fake-large")
    pty.typeLine(`/attach ${png}`)
    await pty.waitFor("attached dot.png (image/png")
    llm.script({ text: "A single dot." })
    pty.typeLine("look at this")
    await pty.waitFor("Keeper› A single dot.")
    const sent = lastCompletion() as unknown as { model: string; messages: Array<{ role: string; content: unknown }> }
    expect(sent.model).toBe("fake-large")
    expect(JSON.stringify(sent.messages.at(-1)!.content)).toContain("data:image/png;base64,")

    llm.script({ text: JSON.stringify({ title: "A dot", summary: "The user showed a one-pixel image." }) })
    pty.typeLine("/summarize")
    await pty.waitFor("A dot\nThe user showed a one-pixel image.")

    llm.script({ toolCalls: [{ name: "client_action", arguments: JSON.stringify({ action: "new_session" }) }] }, { text: "A fresh start." })
    pty.typeLine("start over")
    await pty.waitFor("Keeper› A fresh start.")
    // The client action was carried out: a new session began.
    await pty.waitFor(/A fresh start\.\n {2}new session [0-9a-f]{8} with keeper/)
  })

  it("resumes a session with its own bot when --session is given without --bot", async () => {
    const sessionId = randomUUID()
    llm.script({ text: "Kept." })
    await server.call((client) =>
      client.chat.chat({
        payload: { message: "remember me", bot_id: "keeper", session_id: sessionId, client_id: "cli", attachments: [], passive: false }
      })
    )
    const pty = chat("--session", sessionId)
    await pty.waitFor(`Keeper (keeper) · session ${sessionId.slice(0, 8)}`)
    pty.typeLine("/history")
    await pty.waitFor("Keeper› Kept.")
  })

  it("reads piped input line by line, and never runs a shell command it cannot ask about", async () => {
    llm.script({ toolCalls: [{ name: "shell_exec", arguments: JSON.stringify({ command: "touch piped-should-not-exist" }) }] }, {
      text: "Understood."
    }, { text: "Second line answered." })
    const child = spawn(process.execPath, [cairnBin, "chat", "--bot", "helper", "--url", server.baseUrl, "--key", server.apiKey], {
      env: { ...process.env, NO_COLOR: "1", XDG_CONFIG_HOME: home },
      cwd: home,
      stdio: ["pipe", "pipe", "pipe"]
    })
    let output = ""
    child.stdout.on("data", (chunk) => (output += chunk))
    child.stdin.end("make a file\nsay something else\n")
    const code = await new Promise<number | null>((resolve) => child.on("close", resolve))
    expect(code).toBe(0)
    expect(output).toContain("Run this command on this machine? [y/N] no (no terminal to ask")
    expect(output).toMatch(/you› make a file\n[\s\S]*Helper› Understood\.\nyou› say something else\nHelper› Second line answered\./)
    expect(llm.requestsTo("/v1/chat/completions").at(-2)!.body.messages.find((m: { role: string }) => m.role === "tool").content).toBe(
      "The user declined to run this command."
    )
    expect(fs.existsSync(path.join(home, "piped-should-not-exist"))).toBe(false)
  })

  it("talks in a channel: its bot, and the active session its first message makes", async () => {
    const channel = await json(
      await server.request("/api/v1/admin/channels", { method: "POST", body: JSON.stringify({ name: "cli-room", bot_id: "keeper" }) })
    )
    llm.script({ text: "Welcome to the room." })
    const pty = chat("--channel", channel.id)
    await pty.waitFor("Keeper (keeper) · session (the channel's, at the first message)")
    pty.typeLine("hello room")
    await pty.waitFor("Keeper› Welcome to the room.")
    const active = (await json(await server.request(`/api/v1/channels/${channel.id}`))).active_session_id
    expect(active).toMatch(/^[0-9a-f-]{36}$/)
    pty.typeLine("/history")
    await pty.waitFor(/\/history\nyou› hello room\nKeeper› Welcome to the room\./)
    const messages = await json(await server.request(`/api/v1/channels/${channel.id}/messages`))
    expect(messages.map((m: { content: string }) => m.content)).toEqual(["hello room", "Welcome to the room."])
  })
})
