/**
 * Voice input: the browser records with MediaRecorder (webm/opus in Chromium, mp4 in Safari), the
 * recording is decoded and resampled here to the format `/transcribe` documents (float32 PCM,
 * 16 kHz, mono), and sent through the typed client. Decoding in the browser means any container
 * the browser records in works, without guessing the server's view of it.
 */
import { Effect } from "effect"
import type { CairnClient } from "../../../client.ts"
import { runCall } from "../calls.ts"

const sampleRate = 16_000

export interface Recording {
  /** Stops recording; answers the audio recorded. */
  readonly stop: () => Promise<Blob>
  /** Stops and discards. */
  readonly cancel: () => void
}

export const voiceSupported = () => typeof MediaRecorder !== "undefined" && !!navigator.mediaDevices?.getUserMedia

export const startRecording = async (): Promise<Recording> => {
  const stream = await navigator.mediaDevices.getUserMedia({ audio: true })
  const recorder = new MediaRecorder(stream)
  const chunks: Array<Blob> = []
  recorder.addEventListener("dataavailable", (event) => {
    if (event.data.size > 0) chunks.push(event.data)
  })
  const release = () => stream.getTracks().forEach((track) => track.stop())
  recorder.start()
  return {
    stop: () =>
      new Promise((resolve) => {
        recorder.addEventListener(
          "stop",
          () => {
            release()
            resolve(new Blob(chunks, { type: recorder.mimeType }))
          },
          { once: true }
        )
        recorder.stop()
      }),
    cancel: () => {
      recorder.stop()
      release()
    }
  }
}

/** The recording as float32 little-endian PCM at 16 kHz, mono. */
export const toPcm = async (recording: Blob): Promise<Uint8Array> => {
  const decoder = new AudioContext()
  try {
    const decoded = await decoder.decodeAudioData(await recording.arrayBuffer())
    const length = Math.max(1, Math.ceil(decoded.duration * sampleRate))
    const offline = new OfflineAudioContext(1, length, sampleRate)
    const source = offline.createBufferSource()
    source.buffer = decoded
    source.connect(offline.destination)
    source.start()
    const rendered = await offline.startRendering()
    const samples = rendered.getChannelData(0)
    return new Uint8Array(samples.buffer, samples.byteOffset, samples.byteLength)
  } finally {
    void decoder.close()
  }
}

export const transcribe = async (client: CairnClient, recording: Blob): Promise<string> => {
  const payload = await toPcm(recording)
  return runCall(Effect.map(client.speech.transcribe({ payload }), (answer) => answer.text))
}
