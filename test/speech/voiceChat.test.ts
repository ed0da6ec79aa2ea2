/**
 * Voice input in chat: `audio_data` (base64) with `audio_format` is transcribed before the turn;
 * the stream's first event is `transcript`, the blocking answer carries it, the transcript is the
 * user message and the audio is kept with it. A native-audio bot's model hears the audio itself;
 * no speech is an error and no model call; a bot that takes no voice refuses it.
 */
import { Effect } from "effect"
import * as crypto from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Hooks } from "../../src/hooks/Hooks.ts"
import { startWithFakeLlm, stopWithFakeLlm } from "../compat/harness.ts"
import type { FakeLlm } from "../fixtures/fakeLlm.ts"
import { backends } from "../support/database.ts"
import { json, type TestServer } from "../support/server.ts"
import { silentWav, spokenWav } from "../support/speech.ts"
import { streamedEvents } from "../support/sse.ts"

const sentence = "What time is it in Tokyo"
const base64 = (bytes: Uint8Array) => Buffer.from(bytes).toString("base64")

describe.each(backends)("voice input in chat (%s)", (backend) => {
  let server: TestServer
  let llm: FakeLlm
  const sources: Array<string> = []

  beforeAll(async () => {
    const started = await startWithFakeLlm(backend, "It is noon.")
    server = started.server
    llm = started.llm
    for (const [id, audio_input] of [["listener", "native"], ["deaf", "disabled"]] as const) {
      const bot = await server.request("/api/v1/admin/bots", { method: "POST", body: JSON.stringify({ id, name: id, audio_input }) })
      expect(bot.status).toBe(201)
    }
    await server.run(
      Effect.flatMap(Hooks, (hooks) =>
        Effect.sync(() =>
          hooks.registerHook("before_transcription", (context) => {
            sources.push(context.extra.source)
            return null
          })
        ))
    )
  })
  afterAll(async () => {
    await stopWithFakeLlm({ server, llm })
  })
  const post = (path: string, body: unknown) => server.request(path, { method: "POST", body: JSON.stringify(body) })
  const completions = () => llm.requestsTo("/v1/chat/completions")
  const streamed = (body: Record<string, unknown>) => streamedEvents(server, body)

  it("answers a spoken message blocking, with its transcript, stored as the user message with the audio", async () => {
    llm.scriptTranscriptions({ text: sentence })
    const wav = spokenWav(sentence)
    const sessionId = crypto.randomUUID()
    const response = await post("/chat", { audio_data: base64(wav), audio_format: "wav", client_id: "voice", session_id: sessionId })
    expect(response.status).toBe(200)
    expect(await json(response)).toMatchObject({ session_id: sessionId, response: "It is noon.", transcript: sentence })
    expect(completions().at(-1)!.body.messages.at(-1)).toEqual({ role: "user", content: sentence })
    const [user] = (await json(await server.request(`/sessions/${sessionId}`))).messages
    expect(user).toMatchObject({ role: "user", content: sentence, metadata: { voice: true } })
    expect(user.attachments).toEqual([{ type: "audio", mime_type: "audio/wav", name: "voice.wav", data: base64(wav) }])
    expect(sources.at(-1)).toBe("chat")
  })

  it("streams the transcript before anything else of the turn, typed text first in the message", async () => {
    llm.scriptTranscriptions({ text: sentence })
    const events = await streamed({
      message: "Quick question:",
      audio_data: base64(spokenWav(sentence)),
      audio_format: "wav",
      client_id: "voice-stream"
    })
    expect(events[0]).toEqual({ type: "transcript", text: sentence })
    expect(events.at(-1)).toMatchObject({ type: "response", text: "It is noon." })
    expect(completions().at(-1)!.body.messages.at(-1).content).toBe(`Quick question:\n\n${sentence}`)
  })

  it("ends a message with no speech in it with a clear error and calls no model", async () => {
    const calls = completions().length
    const silence = base64(silentWav(1))
    const events = await streamed({ audio_data: silence, audio_format: "wav", client_id: "voice-silent" })
    expect(events.map((event) => event.type)).toEqual(["transcript", "error", "response"])
    expect(events[0].text).toBe("")
    expect(events[1].message).toMatch(/No speech was recognised/)
    const blocking = await post("/chat", { audio_data: silence, audio_format: "wav", client_id: "voice-silent" })
    expect(blocking.status).toBe(422)
    expect((await json(blocking)).detail[0]).toMatchObject({ loc: ["body", "audio_data"], type: "empty_speech" })
    expect(completions().length).toBe(calls)
  })

  it("lets a native-audio bot's model hear the audio itself, with the transcript beside it", async () => {
    llm.scriptTranscriptions({ text: sentence })
    const wav = spokenWav(sentence)
    const events = await streamed({ audio_data: base64(wav), audio_format: "wav", client_id: "voice-native", bot_id: "listener" })
    expect(events[0]).toEqual({ type: "transcript", text: sentence })
    expect(completions().at(-1)!.body.messages.at(-1)).toEqual({
      role: "user",
      content: [
        { type: "text", text: sentence },
        { type: "input_audio", input_audio: { data: base64(wav), format: "wav" } }
      ]
    })
    // Heard once: the next turn sends the transcript, not the audio again.
    await post("/chat", { message: "and in Paris?", client_id: "voice-native", bot_id: "listener" })
    const earlier = completions().at(-1)!.body.messages.filter((m: { role: string }) => m.role === "user")
    expect(earlier.at(-2)).toEqual({ role: "user", content: sentence })
  })

  it("refuses voice for a bot that takes none, and bad audio, with 422 and nothing stored", async () => {
    const calls = llm.requestsTo("/v1/audio/transcriptions").length
    const deaf = await post("/chat", {
      audio_data: base64(spokenWav(sentence)),
      audio_format: "wav",
      client_id: "voice-deaf",
      bot_id: "deaf"
    })
    expect(deaf.status).toBe(422)
    expect((await json(deaf)).detail[0].type).toBe("audio_disabled")
    const sessionId = crypto.randomUUID()
    for (
      const body of [
        { audio_data: base64(spokenWav(sentence)), session_id: sessionId },
        { audio_data: "not base64!", audio_format: "wav", session_id: sessionId },
        { audio_data: base64(spokenWav(sentence)), audio_format: "webm", session_id: sessionId },
        { audio_data: base64(spokenWav(sentence)), audio_format: "mp3", session_id: sessionId }
      ]
    ) {
      const response = await post("/chat", body)
      expect(response.status, JSON.stringify(body).slice(0, 80)).toBe(422)
    }
    expect((await server.request(`/sessions/${sessionId}`)).status).toBe(404)
    expect(llm.requestsTo("/v1/audio/transcriptions").length).toBe(calls)
  })
})
