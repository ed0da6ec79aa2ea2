/**
 * Real speech for the voice tests: `espeak-ng` speaks a text into a WAV file and `sox` converts it
 * (raw float32 PCM at 16 kHz, FLAC, Ogg Vorbis). Both are Debian packages `.ci/run` installs; a
 * machine without them fails these tests rather than skipping them.
 */
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { tempDir } from "./database.ts"

const dir = tempDir("cairn-speech-")
const made = new Map<string, Uint8Array>()

const run = (command: string, args: ReadonlyArray<string>) => execFileSync(command, args, { stdio: ["ignore", "pipe", "pipe"] })

/** `text` spoken by espeak-ng: a 16-bit mono WAV at 22,050 Hz. */
export const spokenWav = (text: string): Uint8Array => {
  const key = `wav:${text}`
  const cached = made.get(key)
  if (cached) return cached
  const file = path.join(dir, `speech-${made.size}.wav`)
  run("espeak-ng", ["-w", file, text])
  const bytes = new Uint8Array(fs.readFileSync(file))
  made.set(key, bytes)
  return bytes
}

/** The same speech converted by sox: `f32` is raw float32 little-endian PCM, 16 kHz mono. */
export const spokenAs = (text: string, format: "f32" | "flac" | "ogg"): Uint8Array => {
  const key = `${format}:${text}`
  const cached = made.get(key)
  if (cached) return cached
  const source = path.join(dir, `source-${made.size}.wav`)
  fs.writeFileSync(source, spokenWav(text))
  const target = path.join(dir, `converted-${made.size}.${format === "f32" ? "raw" : format}`)
  const output = format === "f32"
    ? ["-r", "16000", "-c", "1", "-e", "floating-point", "-b", "32", "-L", "-t", "raw", target]
    : ["-r", "16000", target]
  run("sox", [source, ...output])
  const bytes = new Uint8Array(fs.readFileSync(target))
  made.set(key, bytes)
  return bytes
}

/** Silence as raw float32 PCM at 16 kHz. */
export const silentPcm = (seconds: number): Uint8Array => new Uint8Array(new Float32Array(Math.round(seconds * 16_000)).buffer)

/** Silence as a 16-bit WAV at 16 kHz. */
export const silentWav = (seconds: number): Uint8Array => {
  const samples = Math.round(seconds * 16_000)
  const out = Buffer.alloc(44 + samples * 2)
  out.write("RIFF", 0)
  out.writeUInt32LE(36 + samples * 2, 4)
  out.write("WAVEfmt ", 8)
  out.writeUInt32LE(16, 16)
  out.writeUInt16LE(1, 20)
  out.writeUInt16LE(1, 22)
  out.writeUInt32LE(16_000, 24)
  out.writeUInt32LE(32_000, 28)
  out.writeUInt16LE(2, 32)
  out.writeUInt16LE(16, 34)
  out.write("data", 36)
  out.writeUInt32LE(samples * 2, 40)
  return new Uint8Array(out)
}

/** A 440 Hz tone as a 16-bit WAV at 16 kHz: audio a fake engine hears as sound, not silence. */
export const toneWav = (seconds: number): Uint8Array => {
  const wav = silentWav(seconds)
  const view = new DataView(wav.buffer, wav.byteOffset, wav.byteLength)
  for (let i = 0; i < (wav.length - 44) / 2; i++) {
    view.setInt16(44 + i * 2, Math.round(Math.sin((2 * Math.PI * 440 * i) / 16_000) * 8000), true)
  }
  return wav
}
