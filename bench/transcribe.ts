/**
 * What `POST /transcribe` adds over the speech engine's own time, for 5 s of real speech
 * (espeak-ng, converted by sox): the engine is the fake OpenAI-compatible server, called directly
 * (multipart, as the `openai` SDK does) as the baseline, and through Cairn with the same audio as
 * raw float32 PCM (checked, wrapped as WAV) and as a WAV file. Interleaved, one at a time.
 *
 *   npx tsx bench/transcribe.ts [pglite|postgres] [rounds=100]
 */
import OpenAI, { toFile } from "openai"
import { startFakeLlm } from "../test/fixtures/fakeLlm.ts"
import { startServer } from "../test/support/server.ts"
import { spokenAs, spokenWav } from "../test/support/speech.ts"

const backend = (process.argv[2] ?? "pglite") as "pglite" | "postgres"
const rounds = Number(process.argv[3] ?? 100)
const median = (values: Array<number>) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!

// About five seconds of speech.
const text = "The quick brown fox jumps over the lazy dog, and then it runs far away into the forest."
const wav = spokenWav(text)
const pcm = spokenAs(text, "f32")
const seconds = pcm.length / 4 / 16_000

const llm = await startFakeLlm({ record: false })
const server = await startServer({ backend, env: { OPENAI_BASE_URL: llm.url, OPENAI_API_KEY: "sk-bench", LOG_LEVEL: "error" } })
const engine = new OpenAI({ baseURL: llm.url, apiKey: "sk-bench" })

const timed = async (call: () => Promise<unknown>) => {
  const started = performance.now()
  await call()
  return performance.now() - started
}
const transcribe = (body: Uint8Array, type: string) => async () => {
  const response = await fetch(`${server.baseUrl}/transcribe`, {
    method: "POST",
    headers: { authorization: `Bearer ${server.apiKey}`, "content-type": type },
    body
  })
  if (response.status !== 200) throw new Error(`/transcribe answered ${response.status}: ${await response.text()}`)
  await response.json()
}
const direct = async () =>
  engine.audio.transcriptions.create({ model: "whisper-1", file: await toFile(wav, "audio.wav", { type: "audio/wav" }) })

const engineMs: Array<number> = []
const pcmMs: Array<number> = []
const wavMs: Array<number> = []
for (let i = 0; i < rounds + 10; i++) {
  const e = await timed(direct)
  const p = await timed(transcribe(pcm, "application/octet-stream"))
  const w = await timed(transcribe(wav, "audio/wav"))
  if (i >= 10) {
    engineMs.push(e)
    pcmMs.push(p)
    wavMs.push(w)
  }
}

const base = median(engineMs)
const line = (name: string, values: Array<number>) =>
  `${name}: median ${median(values).toFixed(2)} ms, +${(median(values) - base).toFixed(2)} ms over the engine, ${
    (median(values) / base).toFixed(2)
  }x`
console.log(
  `transcribe (${backend}), ${seconds.toFixed(1)} s of speech (${pcm.length} bytes PCM, ${wav.length} bytes WAV), ${rounds} rounds`
)
console.log(`engine directly: median ${base.toFixed(2)} ms`)
console.log(line("/transcribe PCM", pcmMs))
console.log(line("/transcribe WAV", wavMs))

await server.close()
await llm.close()
