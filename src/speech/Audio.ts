/**
 * Audio as `/transcribe` and voice chat receive it, checked before any provider sees it: raw PCM
 * (float32 little-endian, 16 kHz, mono) wrapped as WAV, or an encoded file whose first bytes must
 * match the type it claims. Pure functions; the speech service and its tests use them directly.
 */

/** Raw PCM as companion clients record it. */
export const pcmSampleRate = 16_000
const pcmBytesPerSample = 4

export interface AudioFormat {
  /** The extension providers know the format by (their upload must carry a file name). */
  readonly extension: string
  readonly mimeType: string
  /** MIME types a client may send for it (the first is what providers are sent). */
  readonly aliases: ReadonlyArray<string>
  /** Whether the bytes begin the way a file of this format does. */
  readonly looksLike: (bytes: Uint8Array) => boolean
}

const ascii = (bytes: Uint8Array, offset: number, length: number) => String.fromCharCode(...bytes.subarray(offset, offset + length))

/** MP4-family containers (m4a, 3gp) carry `ftyp` at offset 4. */
const isoMedia = (bytes: Uint8Array) => bytes.length >= 12 && ascii(bytes, 4, 4) === "ftyp"

const format = (extension: string, aliases: ReadonlyArray<string>, looksLike: (bytes: Uint8Array) => boolean): AudioFormat => ({
  extension,
  mimeType: aliases[0]!,
  aliases,
  looksLike
})

export const audioFormats: ReadonlyArray<AudioFormat> = [
  format(
    "wav",
    ["audio/wav", "audio/x-wav", "audio/wave", "audio/vnd.wave"],
    (b) => b.length >= 12 && ascii(b, 0, 4) === "RIFF" && ascii(b, 8, 4) === "WAVE"
  ),
  format("m4a", ["audio/mp4", "audio/m4a", "audio/x-m4a"], isoMedia),
  format(
    "aac",
    ["audio/aac", "audio/x-aac"],
    (b) => (b.length >= 2 && b[0] === 0xff && (b[1]! & 0xf6) === 0xf0) || ascii(b, 0, 4) === "ADIF"
  ),
  format(
    "mp3",
    ["audio/mpeg", "audio/mp3"],
    (b) => ascii(b, 0, 3) === "ID3" || (b.length >= 2 && b[0] === 0xff && (b[1]! & 0xe0) === 0xe0)
  ),
  format("ogg", ["audio/ogg", "audio/opus", "application/ogg"], (b) => ascii(b, 0, 4) === "OggS"),
  format("webm", ["audio/webm", "video/webm"], (b) => b.length >= 4 && b[0] === 0x1a && b[1] === 0x45 && b[2] === 0xdf && b[3] === 0xa3),
  format("flac", ["audio/flac", "audio/x-flac"], (b) => ascii(b, 0, 4) === "fLaC"),
  format("3gp", ["audio/3gpp", "audio/3gpp2", "video/3gpp"], isoMedia),
  format("amr", ["audio/amr", "audio/amr-wb"], (b) => ascii(b, 0, 5) === "#!AMR")
]

/** The format a Content-Type names (parameters ignored), if it is one we take. */
export const formatOfMimeType = (contentType: string): AudioFormat | undefined => {
  const type = contentType.split(";", 1)[0]!.trim().toLowerCase()
  return audioFormats.find((f) => f.aliases.includes(type))
}

/** The format of a file name's extension (a multipart upload without a usable type). */
export const formatOfFileName = (name: string): AudioFormat | undefined => {
  const extension = name.toLowerCase().split(".").at(-1)
  return audioFormats.find((f) => f.extension === extension || (extension === "mp4" && f.extension === "m4a"))
}

/** An uploaded file's format: by its type when that names one, else by its name. */
export const formatOfUpload = (mimeType: string, fileName: string): AudioFormat | undefined =>
  formatOfMimeType(mimeType) ?? formatOfFileName(fileName)

export const formatByExtension = (extension: string): AudioFormat => audioFormats.find((f) => f.extension === extension)!

export interface WavInfo {
  readonly channels: number
  readonly sampleRate: number
  readonly bitsPerSample: number
  readonly durationSeconds: number
}

/** A WAV file's format and duration from its chunks, or a reason it cannot be read. */
export const readWav = (bytes: Uint8Array): WavInfo | string => {
  if (!formatByExtension("wav").looksLike(bytes)) return "not a RIFF/WAVE file"
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  let offset = 12
  let fmt: { channels: number; sampleRate: number; byteRate: number; bitsPerSample: number } | undefined
  while (offset + 8 <= bytes.length) {
    const id = ascii(bytes, offset, 4)
    const size = view.getUint32(offset + 4, true)
    const body = offset + 8
    if (id === "fmt ") {
      if (size < 16 || body + 16 > bytes.length) return "a truncated fmt chunk"
      fmt = {
        channels: view.getUint16(body + 2, true),
        sampleRate: view.getUint32(body + 4, true),
        byteRate: view.getUint32(body + 8, true),
        bitsPerSample: view.getUint16(body + 14, true)
      }
    } else if (id === "data") {
      if (!fmt) return "a data chunk before the fmt chunk"
      if (fmt.byteRate === 0 || fmt.channels === 0 || fmt.sampleRate === 0) return "a fmt chunk with a zero rate or channel count"
      // A streamed WAV may give 0 or 0xFFFFFFFF as the size: the rest of the file is the data.
      const available = bytes.length - body
      const length = size === 0 || size === 0xffffffff ? available : Math.min(size, available)
      return {
        channels: fmt.channels,
        sampleRate: fmt.sampleRate,
        bitsPerSample: fmt.bitsPerSample,
        durationSeconds: length / fmt.byteRate
      }
    }
    offset = body + size + (size % 2)
  }
  return fmt ? "no data chunk" : "no fmt chunk"
}

/** The length of raw PCM in seconds, or why it is not PCM as `/transcribe` takes it. */
export const pcmSeconds = (bytes: Uint8Array): number | string =>
  bytes.length % pcmBytesPerSample !== 0
    ? `raw PCM is float32 (4 bytes a sample), but the body is ${bytes.length} bytes, not a multiple of 4`
    : bytes.length / pcmBytesPerSample / pcmSampleRate

/** Float32 PCM (16 kHz mono) as a 16-bit PCM WAV file, which every speech engine reads. */
export const pcmToWav = (pcm: Uint8Array): Uint8Array => {
  const samples = Math.floor(pcm.length / pcmBytesPerSample)
  const input = new DataView(pcm.buffer, pcm.byteOffset, samples * pcmBytesPerSample)
  const out = new Uint8Array(44 + samples * 2)
  const view = new DataView(out.buffer)
  const text = (offset: number, value: string) => {
    for (let i = 0; i < value.length; i++) out[offset + i] = value.charCodeAt(i)
  }
  text(0, "RIFF")
  view.setUint32(4, 36 + samples * 2, true)
  text(8, "WAVE")
  text(12, "fmt ")
  view.setUint32(16, 16, true)
  view.setUint16(20, 1, true) // integer PCM
  view.setUint16(22, 1, true) // mono
  view.setUint32(24, pcmSampleRate, true)
  view.setUint32(28, pcmSampleRate * 2, true)
  view.setUint16(32, 2, true)
  view.setUint16(34, 16, true)
  text(36, "data")
  view.setUint32(40, samples * 2, true)
  for (let i = 0; i < samples; i++) {
    const sample = input.getFloat32(i * pcmBytesPerSample, true)
    const clamped = Number.isFinite(sample) ? Math.max(-1, Math.min(1, sample)) : 0
    view.setInt16(44 + i * 2, Math.round(clamped * 32767), true)
  }
  return out
}

export interface AudioLimits {
  /** TRANSCRIBE_MAX_SECONDS: the longest audio taken, where its length is known. */
  readonly maxSeconds: number
  /** TRANSCRIBE_MAX_BYTES: the largest body taken. */
  readonly maxBytes: number
}

/** Shorter than this is no speech to transcribe (OpenAI refuses it too). */
export const minSeconds = 0.1

/** Audio ready for an engine: the file to send, its format, and its length when known. */
export interface PreparedAudio {
  readonly file: Uint8Array
  readonly format: AudioFormat
  readonly durationSeconds: number | null
}

const checkLength = (seconds: number, limits: AudioLimits): string | null =>
  seconds < minSeconds
    ? `The audio is too short: ${seconds.toFixed(3)} s (at least ${minSeconds} s)`
    : seconds > limits.maxSeconds
    ? `The audio is too long: ${seconds.toFixed(1)} s (at most ${limits.maxSeconds} s, TRANSCRIBE_MAX_SECONDS)`
    : null

const checkSize = (bytes: Uint8Array, limits: AudioLimits): string | null =>
  bytes.length === 0
    ? "The audio is empty"
    : bytes.length > limits.maxBytes
    ? `The audio is ${bytes.length} bytes (at most ${limits.maxBytes}, TRANSCRIBE_MAX_BYTES)`
    : null

/** Raw float32 PCM, checked and wrapped as WAV; or why it cannot be taken. */
export const preparePcm = (bytes: Uint8Array, limits: AudioLimits): PreparedAudio | string => {
  const size = checkSize(bytes, limits)
  if (size) return size
  const seconds = pcmSeconds(bytes)
  if (typeof seconds === "string") return seconds
  const length = checkLength(seconds, limits)
  if (length) return length
  return { file: pcmToWav(bytes), format: formatByExtension("wav"), durationSeconds: seconds }
}

/** An encoded file that must be what it claims; a WAV's length is read and checked too. */
export const prepareFile = (bytes: Uint8Array, format: AudioFormat, limits: AudioLimits): PreparedAudio | string => {
  const size = checkSize(bytes, limits)
  if (size) return size
  if (!format.looksLike(bytes)) return `The audio is not a ${format.extension} file: its first bytes are not a ${format.extension} header`
  if (format.extension !== "wav") return { file: bytes, format, durationSeconds: null }
  const wav = readWav(bytes)
  if (typeof wav === "string") return `The WAV file cannot be read: ${wav}`
  const length = checkLength(wav.durationSeconds, limits)
  return length ?? { file: bytes, format, durationSeconds: wav.durationSeconds }
}
