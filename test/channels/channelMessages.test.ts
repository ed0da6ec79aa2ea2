/**
 * A channel's sub-resources: its messages (the active session's, read and posted, optionally
 * running the agent) and its configuration, each behind its own scope.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createKey } from "../auth/helpers.ts"
import { type FakeLlm, startFakeLlm } from "../fixtures/fakeLlm.ts"
import { backends } from "../support/database.ts"
import { waitFor } from "../support/integrations.ts"
import { json, startServer, type TestServer } from "../support/server.ts"

describe.each(backends)("channel messages and config (%s)", (backend) => {
  let llm: FakeLlm
  let server: TestServer

  beforeAll(async () => {
    llm = await startFakeLlm({ defaultReply: { text: "Seen it." } })
    server = await startServer({
      backend,
      env: { OPENAI_BASE_URL: llm.url, OPENAI_API_KEY: "sk-channel", DEFAULT_MODEL: "fake-model", LLM_MAX_RETRIES: "0" }
    })
  })
  afterAll(async () => {
    await server?.close()
    await llm?.close()
  })
  const newChannel = async (body: Record<string, unknown> = {}) =>
    (await json(
      await server.request("/api/v1/admin/channels", { method: "POST", body: JSON.stringify({ name: "hall", bot_id: "default", ...body }) })
    )).id as string

  it("posts into the channel's active session, reads it back, and runs the agent when asked", async () => {
    const id = await newChannel()
    expect(await json(await server.request(`/api/v1/channels/${id}/messages`))).toEqual([])
    const posted = await json(
      await server.request(`/api/v1/channels/${id}/messages`, { method: "POST", body: JSON.stringify({ content: "The door is open" }) })
    )
    expect(posted.task_id).toBeNull()
    const channel = await json(await server.request(`/api/v1/channels/${id}`))
    expect(posted.session_id).toBe(channel.active_session_id)

    const run = await json(
      await server.request(`/api/v1/channels/${id}/messages`, {
        method: "POST",
        body: JSON.stringify({ content: "Close it?", run_agent: true })
      })
    )
    expect(run.task_id).toEqual(expect.any(String))
    await waitFor(
      async () => ((await json(await server.request(`/api/v1/tasks/${run.task_id}`))).status === "complete" ? true : undefined),
      "the task"
    )
    const messages = await json(await server.request(`/api/v1/channels/${id}/messages`))
    expect(messages.map((m: { role: string; content: string }) => [m.role, m.content])).toEqual([
      ["user", "The door is open"],
      ["user", "Close it?"],
      ["assistant", "Seen it."]
    ])
    expect(messages[0].metadata).toMatchObject({ injected: true })
    expect((await json(await server.request(`/api/v1/channels/${id}/messages?limit=1`))).map((m: { content: string }) => m.content))
      .toEqual(["Seen it."])
  })

  it("answers the channel's configuration", async () => {
    const id = await newChannel({ require_mention: true, workspace_enabled: true, model_override: "fake-model-2" })
    expect(await json(await server.request(`/api/v1/channels/${id}/config`))).toEqual({
      require_mention: true,
      passive_memory: false,
      workspace_enabled: true,
      model_override: "fake-model-2",
      retrieval: null,
      integration_config: {}
    })
  })

  it("checks each route's scope, and refuses bad input and unknown channels", async () => {
    const id = await newChannel()
    const reader = await createKey(server, ["channels.messages:read"])
    const configReader = await createKey(server, ["channels.config:read"])
    expect((await server.request(`/api/v1/channels/${id}/messages`, { auth: reader.key })).status).toBe(200)
    expect(
      (await server.request(`/api/v1/channels/${id}/messages`, {
        method: "POST",
        body: JSON.stringify({ content: "x" }),
        auth: reader.key
      })).status
    ).toBe(403)
    expect((await server.request(`/api/v1/channels/${id}/config`, { auth: reader.key })).status).toBe(403)
    expect((await server.request(`/api/v1/channels/${id}/config`, { auth: configReader.key })).status).toBe(200)
    expect(
      (await server.request(`/api/v1/channels/${id}/messages`, { method: "POST", body: JSON.stringify({ text: "wrong field" }) })).status
    ).toBe(422)
    expect(
      (await server.request(`/api/v1/channels/${id}/messages`, {
        method: "POST",
        body: JSON.stringify({ content: "x", dispatch_type: "carrier-pigeon" })
      })).status
    ).toBe(422)
    expect(await json(await server.request(`/api/v1/channels/${id}/messages`))).toEqual([])
    const unknown = "00000000-0000-4000-8000-000000000000"
    expect((await server.request(`/api/v1/channels/${unknown}/messages`)).status).toBe(404)
    expect(
      (await server.request(`/api/v1/channels/${unknown}/messages`, { method: "POST", body: JSON.stringify({ content: "x" }) })).status
    ).toBe(404)
    expect((await server.request(`/api/v1/channels/${unknown}/config`)).status).toBe(404)
  })
})
