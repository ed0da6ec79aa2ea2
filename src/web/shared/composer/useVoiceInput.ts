/**
 * Voice input's state: idle, recording, then transcribing. The first toggle starts recording, the
 * second stops it and hands what `/transcribe` heard to `onHeard`; failures go to `onNotice`.
 */
import { useState } from "react"
import type { CairnClient } from "../../../client.ts"
import { describeError } from "../calls.ts"
import { type Recording, startRecording, transcribe } from "./voice.ts"

export type VoiceState = { readonly kind: "idle" } | { readonly kind: "recording"; readonly recording: Recording } | {
  readonly kind: "transcribing"
}

export const useVoiceInput = (
  client: CairnClient,
  { onHeard, onNotice }: { readonly onHeard: (heard: string) => void; readonly onNotice: (notice: string | null) => void }
) => {
  const [voice, setVoice] = useState<VoiceState>({ kind: "idle" })
  const toggle = async () => {
    if (voice.kind === "recording") {
      setVoice({ kind: "transcribing" })
      try {
        onHeard(await transcribe(client, await voice.recording.stop()))
      } catch (error) {
        onNotice(`Transcription failed: ${describeError(error)}`)
      } finally {
        setVoice({ kind: "idle" })
      }
      return
    }
    try {
      onNotice(null)
      setVoice({ kind: "recording", recording: await startRecording() })
    } catch (error) {
      onNotice(`The microphone is not available: ${describeError(error)}`)
    }
  }
  return { voice, toggle }
}
