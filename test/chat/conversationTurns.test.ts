/**
 * What a turn in a conversation is sent with, whichever way it runs, on both databases: a message
 * sent again (regenerate, edit and resend: `resend_of`) takes the original message's images again
 * from the server, and a message queued behind a busy session runs with the conversation's own
 * instructions and temperature, as a direct turn does.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { type FakeLlm, fakeLlmEnv, startFakeLlm } from "../fixtures/fakeLlm.ts"
import { backends } from "../support/database.ts"
import { json, startServer, type TestServer } from "../support/server.ts"
import { until } from "../support/time.ts"

const png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII="

/** The image parts of a provider request's last user message. */
const imagesOfLastUser = (body: any): Array<string> => {
  const last = [...body.messages].reverse().find((message: any) => message.role === "user")
  return Array.isArray(last?.content)
    ? last.content.filter((part: any) => part.type === "image_url").map((part: any) => part.image_url.url)
    : []
}

describe.each(backends)("a conversation's turns (%s)", (backend) => {
  let server: TestServer
  let llm: FakeLlm

  beforeAll(async () => {
    llm = await startFakeLlm()
    server = await startServer({ backend, env: fakeLlmEnv(llm) })
  })
  afterAll(async () => {
    await server?.close()
    await llm?.close()
  })
  beforeEach(() => llm.reset())

  const chat = (body: Record<string, unknown>) =>
    server.request("/chat", { method: "POST", body: JSON.stringify({ client_id: "web:turns", ...body }) })
  const completions = () => llm.requestsTo("/v1/chat/completions").map((request) => request.body)
  const messagesOf = async (id: string): Promise<Array<any>> => json(await server.request(`/api/v1/sessions/${id}/messages`))

  it("sends the original message's images again on a regenerate and on an edited resend", async () => {
    const id = crypto.randomUUID()
    const sent = await chat({
      message: "What is in this picture?",
      session_id: id,
      attachments: [{ type: "image", mime_type: "image/png", name: "dot.png", data: png }]
    })
    expect(sent.status).toBe(200)
    expect(imagesOfLastUser(completions()[0])).toEqual([`data:image/png;base64,${png}`])
    const original = (await messagesOf(id)).find((message) => message.role === "user")

    // Regenerate: a branch before the message, the same text sent again with no attachments of its own.
    for (const text of ["What is in this picture?", "Describe the picture in one word."]) {
      const fork = await server.request(`/api/v1/sessions/${id}/fork`, {
        method: "POST",
        body: JSON.stringify({ message_id: original.id })
      })
      const branch = await json(fork)
      const again = await chat({ message: text, session_id: branch.id, resend_of: original.id })
      expect(again.status).toBe(200)
      const request = completions().at(-1)
      expect(imagesOfLastUser(request)).toEqual([`data:image/png;base64,${png}`])
      expect(JSON.stringify(request.messages)).toContain(text)
      // Stored with the branch's message too, so the branch's later turns still see it.
      const stored = (await messagesOf(branch.id)).find((message) => message.role === "user")
      expect(stored.attachments).toEqual([expect.objectContaining({ type: "image", mime_type: "image/png", data: png })])
    }

    // A message of another conversation is not one to send again.
    const elsewhere = crypto.randomUUID()
    expect((await chat({ message: "unrelated", session_id: elsewhere })).status).toBe(200)
    const refused = await chat({ message: "steal", session_id: elsewhere, resend_of: original.id })
    expect(refused.status).toBe(422)
    expect(JSON.stringify(await refused.json())).toContain("resend_of")
  })

  it("runs a message queued behind a busy session with the conversation's instructions and temperature", async () => {
    const id = crypto.randomUUID()
    expect((await chat({ message: "hello", session_id: id })).status).toBe(200)
    const configured = await server.request(`/api/v1/sessions/${id}`, {
      method: "PATCH",
      body: JSON.stringify({ system_prompt: "Answer like a pirate.", temperature: 0.3, model: "fake-other" })
    })
    expect(configured.status).toBe(200)
    llm.reset()
    let release = () => {}
    const held = new Promise<void>((resolve) => (release = resolve))
    llm.script({ text: "Held answer.", waitFor: held }, { text: "Queued answer." })
    const first = chat({ message: "first, held", session_id: id })
    await until(async () => completions().length, (count) => count === 1, 20_000, "the first run's model call")
    const second = chat({ message: "second, queued", session_id: id })
    // The second message is a task: stored once the worker takes it, after the first run ends.
    const queued = await until(
      async () => json(await server.request(`/api/v1/tasks?session_id=${id}`)),
      (tasks: any) => (Array.isArray(tasks) ? tasks : tasks.items ?? []).length > 0,
      20_000,
      "the queued task"
    )
    expect(queued).toBeTruthy()
    release()
    expect((await first).status).toBe(200)
    const answered = await second
    expect(answered.status).toBe(200)
    expect((await json(answered)).response).toBe("Queued answer.")
    const [direct, fromQueue] = completions()
    for (const request of [direct, fromQueue]) {
      expect(request.model).toBe("fake-other")
      expect(request.temperature).toBe(0.3)
      expect(request.messages[0].content).toContain("Answer like a pirate.")
    }
    expect(JSON.stringify(fromQueue.messages)).toContain("second, queued")
    const stored = await messagesOf(id)
    expect(stored.find((message) => message.content === "second, queued").metadata).toHaveProperty("task_id")
  })
})
