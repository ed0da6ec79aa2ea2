/**
 * `POST /transcribe` with real speech (espeak-ng, converted by sox): raw float32 PCM, an encoded
 * file by its audio type, or multipart with a `file` field. Bad audio is a 422 before any provider
 * call; a failing engine is a 502 that names no key; the `before_transcription` hook answers first
 * or falls through; usage counts the seconds; the route needs the `chat` scope.
 */
import { Effect } from "effect"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { Hooks } from "../../src/hooks/Hooks.ts"
import type { OverrideContext } from "../../src/sdk/Hooks.ts"
import { createKey } from "../auth/helpers.ts"
import { type FakeLlm, startFakeLlm } from "../fixtures/fakeLlm.ts"
import { backends } from "../support/database.ts"
import { json, startServer, type TestServer } from "../support/server.ts"
import { silentPcm, silentWav, spokenAs, spokenWav } from "../support/speech.ts"

const providerKey = "sk-speech-test-key-0123456789"
const sentence = "Remind me to water the plants tomorrow"

describe.each(backends)("POST /transcribe (%s)", (backend) => {
  let server: TestServer
  let llm: FakeLlm
  const heard: Array<{ extra: unknown; head: string }> = []
  let hookAnswer: string | null = null

  beforeAll(async () => {
    llm = await startFakeLlm({ apiKey: providerKey })
    server = await startServer({
      backend,
      env: { OPENAI_BASE_URL: llm.url, OPENAI_API_KEY: providerKey, LLM_MAX_RETRIES: "0", TRANSCRIBE_MAX_SECONDS: "20" }
    })
    await server.run(
      Effect.flatMap(Hooks, (hooks) =>
        Effect.sync(() =>
          hooks.registerHook("before_transcription", (context: OverrideContext) => {
            heard.push({ extra: context.extra, head: String.fromCharCode(...context.audio.subarray(0, 4)) })
            return hookAnswer
          })
        ))
    )
  })
  afterAll(async () => {
    await server?.close()
    await llm?.close()
  })
  beforeEach(() => {
    heard.length = 0
    hookAnswer = null
  })

  const engineCalls = () => llm.requestsTo("/v1/audio/transcriptions")
  const send = (body: NonNullable<RequestInit["body"]>, contentType?: string, auth?: string) =>
    server.request("/transcribe", {
      method: "POST",
      body,
      ...(contentType ? { headers: { "content-type": contentType } } : {}),
      ...(auth ? { auth } : {})
    })

  it("transcribes raw float32 PCM through the typed client: wrapped as WAV for the engine, with its length", async () => {
    llm.scriptTranscriptions({ text: sentence })
    const pcm = spokenAs(sentence, "f32")
    const answer = await server.call((client) => client.speech.transcribe({ payload: pcm }))
    expect(answer.text).toBe(sentence)
    expect(answer.duration_s).toBeCloseTo(pcm.length / 4 / 16_000, 2)
    const call = engineCalls().at(-1)!.body
    expect(call.fields.model).toBe("whisper-1")
    expect(call.file).toMatchObject({ name: "audio.wav", type: "audio/wav", size: 44 + (pcm.length / 4) * 2 })
    expect(heard).toEqual([{ extra: { audio_format: "wav", audio_size_bytes: call.file.size, source: "api" }, head: "RIFF" }])
  })

  it("transcribes a WAV file sent as audio/wav, and an Ogg file by its type", async () => {
    llm.scriptTranscriptions({ text: sentence }, { text: "from ogg" })
    const wav = spokenWav(sentence)
    const answer = await json(await send(wav, "audio/wav"))
    expect(answer.text).toBe(sentence)
    expect(answer.duration_s).toBeGreaterThan(1)
    expect(engineCalls().at(-1)!.body.file).toMatchObject({ name: "audio.wav", size: wav.length })

    const ogg = await send(spokenAs(sentence, "ogg"), "audio/ogg; codecs=vorbis")
    expect(ogg.status).toBe(200)
    expect(await json(ogg)).toEqual({ text: "from ogg" })
    expect(engineCalls().at(-1)!.body.file).toMatchObject({ name: "audio.ogg", type: "audio/ogg" })
  })

  it("takes a multipart upload's `file` field, its format from its type or name", async () => {
    llm.scriptTranscriptions({ text: "from flac" })
    const form = new FormData()
    form.append("note", "ignored")
    form.append("file", new Blob([spokenAs(sentence, "flac")]), "memo.flac")
    const response = await send(form)
    expect(response.status).toBe(200)
    expect(await json(response)).toEqual({ text: "from flac" })
    expect(engineCalls().at(-1)!.body.file).toMatchObject({ name: "audio.flac", type: "audio/flac" })
  })

  it("refuses audio that is not what it says with a 422 in the spec's list shape, and calls no engine", async () => {
    const calls = engineCalls().length
    const wav = spokenWav(sentence)
    const noFile = new FormData()
    noFile.append("note", "no audio here")
    const unnamed = new FormData()
    unnamed.append("file", new Blob([wav]), "memo.xyz")
    const cases: ReadonlyArray<readonly [string, NonNullable<RequestInit["body"]>, string | undefined, RegExp]> = [
      ["odd PCM length", new Uint8Array(16_001), "application/octet-stream", /not a multiple of 4/],
      ["PCM too short", silentPcm(0.05), "application/octet-stream", /too short/],
      ["PCM too long", silentPcm(21), "application/octet-stream", /too long: 21\.0 s \(at most 20 s/],
      ["empty body", new Uint8Array(0), "application/octet-stream", /empty/],
      ["unknown type", wav, "text/plain", /Unsupported Content-Type/],
      ["unknown audio type", wav, "audio/x-tracker-module", /Unsupported Content-Type/],
      ["WAV claimed as MP3", wav, "audio/mpeg", /not a mp3 file/],
      ["garbage claimed as WAV", new TextEncoder().encode("RIFF but not really a wave file"), "audio/wav", /not a wav file/],
      ["WAV too long", silentWav(21), "audio/wav", /too long: 21\.0 s/],
      ["multipart without a file", noFile, undefined, /`file` field/],
      ["multipart file of unknown type", unnamed, undefined, /Unknown audio type/]
    ]
    for (const [name, body, type, message] of cases) {
      const response = await send(body, type)
      expect(response.status, name).toBe(422)
      const detail = (await json(response)).detail
      expect(Array.isArray(detail), name).toBe(true)
      expect(detail[0].msg, name).toMatch(message)
    }
    expect(engineCalls().length).toBe(calls)
    expect(heard).toEqual([])
  })

  it("answers a failing engine with a 502 that names the failure and never the key", async () => {
    llm.scriptTranscriptions({
      status: 503,
      errorBody: { error: { message: `engine overloaded (key ${providerKey})`, type: "server_error" } }
    })
    const response = await send(spokenWav(sentence), "audio/wav")
    expect(response.status).toBe(502)
    const text = await response.text()
    expect(JSON.parse(text).detail).toMatch(/^The speech engine failed: /)
    expect(text).not.toContain(providerKey)
    // An engine that refuses the audio itself (OpenAI takes no AMR) is the caller's 422.
    const amr = await send(new Uint8Array([...new TextEncoder().encode("#!AMR\n"), ...new Uint8Array(400)]), "audio/amr")
    expect(amr.status).toBe(422)
    expect((await json(amr)).detail[0]).toMatchObject({ type: "provider_rejected" })
  })

  it("lets a before_transcription hook answer instead of the engine, and falls through when it answers null", async () => {
    const calls = engineCalls().length
    hookAnswer = "what the local model heard"
    const answered = await json(await send(spokenWav(sentence), "audio/wav"))
    expect(answered.text).toBe("what the local model heard")
    expect(engineCalls().length).toBe(calls)
    hookAnswer = null
    llm.scriptTranscriptions({ text: sentence })
    expect((await json(await send(spokenWav(sentence), "audio/wav"))).text).toBe(sentence)
    expect(engineCalls().length).toBe(calls + 1)
    expect(heard.map((h) => h.head)).toEqual(["RIFF", "RIFF"])
  })

  it("records the seconds of audio in usage", async () => {
    const before = (await json(await server.request("/api/v1/admin/usage"))).totals.audio_seconds
    llm.scriptTranscriptions({ text: sentence })
    const pcm = spokenAs(sentence, "f32")
    expect((await send(pcm, "application/octet-stream")).status).toBe(200)
    const after = (await json(await server.request("/api/v1/admin/usage"))).totals
    expect(after.audio_seconds - before).toBeCloseTo(pcm.length / 4 / 16_000, 2)
  })

  it("needs the chat scope", async () => {
    const reader = await createKey(server, ["sessions:read"])
    const chatter = await createKey(server, ["chat"])
    const wav = spokenWav(sentence)
    expect((await send(wav, "audio/wav", reader.key)).status).toBe(403)
    expect(
      (await server.request("/transcribe", { method: "POST", body: wav, headers: { "content-type": "audio/wav" }, auth: null })).status
    ).toBe(401)
    llm.scriptTranscriptions({ text: sentence })
    expect((await send(wav, "audio/wav", chatter.key)).status).toBe(200)
  })
})
