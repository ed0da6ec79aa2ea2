/** The audio checks `/transcribe` and voice chat make before any engine hears a byte (pure functions). */
import { describe, expect, it } from "vitest"
import {
  audioFormats,
  formatByExtension,
  formatOfFileName,
  formatOfMimeType,
  pcmToWav,
  prepareFile,
  preparePcm,
  readWav
} from "../../src/speech/Audio.ts"
import { silentPcm, spokenAs, spokenWav } from "../support/speech.ts"

const limits = { maxSeconds: 10, maxBytes: 1_000_000 }
const ascii = (text: string) => new TextEncoder().encode(text)
const padded = (head: ReadonlyArray<number> | Uint8Array) => new Uint8Array([...head, ...new Uint8Array(32)])

describe("audio formats", () => {
  it("knows a format by its Content-Type, parameters and case aside, and by a file's extension", () => {
    expect(formatOfMimeType("audio/wav")?.extension).toBe("wav")
    expect(formatOfMimeType("Audio/X-WAV; codecs=1")?.extension).toBe("wav")
    expect(formatOfMimeType("audio/mp4")?.extension).toBe("m4a")
    expect(formatOfMimeType("audio/ogg; codecs=opus")?.extension).toBe("ogg")
    expect(formatOfMimeType("text/plain")).toBeUndefined()
    expect(formatOfFileName("memo.M4A")?.extension).toBe("m4a")
    expect(formatOfFileName("clip.mp4")?.extension).toBe("m4a")
    expect(formatOfFileName("notes.txt")).toBeUndefined()
  })

  it("tells each format's first bytes from the others'", () => {
    const heads: Record<string, Uint8Array> = {
      wav: padded([...ascii("RIFF"), 0, 0, 0, 0, ...ascii("WAVE")]),
      m4a: padded([0, 0, 0, 32, ...ascii("ftypM4A ")]),
      aac: padded([0xff, 0xf1, 0x50, 0x80]),
      mp3: padded(ascii("ID3")),
      ogg: padded(ascii("OggS")),
      webm: padded([0x1a, 0x45, 0xdf, 0xa3]),
      flac: padded(ascii("fLaC")),
      amr: padded(ascii("#!AMR\n"))
    }
    for (const [name, head] of Object.entries(heads)) {
      expect(formatByExtension(name).looksLike(head), name).toBe(true)
      const others = audioFormats.filter((f) => f.looksLike(head)).map((f) => f.extension)
      // m4a and 3gp share the ISO media container; MPEG frame sync covers ADTS AAC.
      expect(others.filter((e) => !["3gp", "m4a", "mp3", "aac"].includes(e) || e === name), name).toEqual([name])
    }
    expect(formatByExtension("wav").looksLike(ascii("RIFF"))).toBe(false)
  })
})

describe("WAV and raw PCM", () => {
  it("reads a real WAV's format and length", () => {
    const info = readWav(spokenWav("testing one two three"))
    expect(info).toMatchObject({ channels: 1, sampleRate: 22_050, bitsPerSample: 16 })
    expect(typeof info === "object" && info.durationSeconds).toBeGreaterThan(1)
    expect(readWav(ascii("RIFF1234WAVEdata"))).toBe("no fmt chunk")
  })

  it("wraps float32 PCM as a 16 kHz 16-bit WAV of the same length, clamping what is out of range", () => {
    const pcm = spokenAs("testing one two three", "f32")
    const wav = pcmToWav(pcm)
    const info = readWav(wav)
    expect(info).toMatchObject({ channels: 1, sampleRate: 16_000, bitsPerSample: 16 })
    expect(typeof info === "object" && info.durationSeconds).toBeCloseTo(pcm.length / 4 / 16_000, 6)
    const loud = pcmToWav(new Uint8Array(new Float32Array([2, -2, Number.NaN, 0.5]).buffer))
    const view = new DataView(loud.buffer)
    expect([0, 1, 2, 3].map((i) => view.getInt16(44 + i * 2, true))).toEqual([32767, -32767, 0, 16384])
  })

  it("says why audio is refused: empty, odd PCM, too short, too long, too large, not what it claims", () => {
    expect(preparePcm(new Uint8Array(), limits)).toBe("The audio is empty")
    expect(preparePcm(new Uint8Array(6), limits)).toMatch(/not a multiple of 4/)
    expect(preparePcm(silentPcm(0.05), limits)).toMatch(/too short: 0\.050 s/)
    expect(preparePcm(silentPcm(11), limits)).toMatch(/too long: 11\.0 s \(at most 10 s/)
    expect(preparePcm(silentPcm(5), { ...limits, maxBytes: 1000 })).toMatch(/at most 1000, TRANSCRIBE_MAX_BYTES/)
    expect(prepareFile(spokenWav("hello"), formatByExtension("mp3"), limits)).toMatch(/not a mp3 file/)
    const ok = prepareFile(spokenWav("hello"), formatByExtension("wav"), limits)
    expect(typeof ok === "object" && ok.durationSeconds).toBeGreaterThan(0.1)
    const flac = prepareFile(spokenAs("hello", "flac"), formatByExtension("flac"), limits)
    expect(typeof flac === "object" && flac.durationSeconds).toBeNull()
  })
})
