/**
 * Speech to text for every way audio arrives (`/transcribe`, voice chat, integrations): the
 * `before_transcription` hook first (its first text wins), else the OpenAI-compatible
 * transcription endpoint of the provider that serves TRANSCRIPTION_MODEL.
 */
import { Config, Effect, Option } from "effect"
import { AppConfig } from "../config/AppConfig.ts"
import { ValidationError } from "../contract/Errors.ts"
import { Hooks } from "../hooks/Hooks.ts"
import { ProviderFailed } from "../providers/Errors.ts"
import { Llm } from "../providers/Llm.ts"
import type { LlmError, UsageContext } from "../providers/Model.ts"
import { traced } from "../telemetry/Spans.ts"
import type { AudioLimits, PreparedAudio } from "./Audio.ts"

export const speechConfig = Config.all({
  maxSeconds: Config.number("TRANSCRIBE_MAX_SECONDS").pipe(
    Config.withDefault(60),
    Config.validate({ message: "Expected a positive number of seconds", validation: (n) => n > 0 })
  ),
  /** Voice chat keeps the audio with its message up to this size (larger audio keeps its transcript only). */
  keepAudioBytes: Config.integer("AUDIO_ATTACHMENT_MAX_BYTES").pipe(
    Config.withDefault(2 * 1024 * 1024),
    Config.validate({ message: "Expected a non-negative integer", validation: (n) => n >= 0 })
  )
})

export interface Transcription {
  readonly text: string
  readonly durationSeconds: number | null
  readonly language: string | null
  /** "hook" when a before_transcription callback answered, else the engine's model id. */
  readonly engine: string
}

export interface TranscribeInput {
  readonly audio: PreparedAudio
  /** "api", "chat" or an integration's id (the hook's `source`). */
  readonly source: string
  readonly usage: UsageContext
  readonly ids?: {
    readonly bot_id?: string | null
    readonly session_id?: string | null
    readonly channel_id?: string | null
    readonly client_id?: string | null
  }
  /** An engine model other than TRANSCRIPTION_MODEL. */
  readonly model?: string | undefined
}

/** A speech engine's failure: a refusal of the audio is the caller's 422, anything else our 502. */
export const speechFailure = (error: LlmError): Effect.Effect<never, ValidationError | ProviderFailed> =>
  Effect.fail(
    error.kind === "invalid_request"
      ? ValidationError.single(["body"], `The speech engine refused the audio: ${error.detail}`, "provider_rejected")
      : new ProviderFailed({ detail: `The speech engine failed: ${error.detail}` })
  )

export class Speech extends Effect.Service<Speech>()("cairn/Speech", {
  effect: Effect.gen(function*() {
    const hooks = yield* Hooks
    const llm = yield* Llm
    const config = yield* speechConfig
    const { transcribeMaxBytes } = yield* AppConfig
    const limits: AudioLimits = { maxSeconds: config.maxSeconds, maxBytes: transcribeMaxBytes }

    const transcribe = (input: TranscribeInput) =>
      Effect.gen(function*() {
        const { audio } = input
        const overridden = yield* hooks.override(
          "before_transcription",
          {
            bot_id: input.ids?.bot_id ?? null,
            session_id: input.ids?.session_id ?? null,
            channel_id: input.ids?.channel_id ?? null,
            client_id: input.ids?.client_id ?? null,
            correlation_id: null,
            extra: { audio_format: audio.format.extension, audio_size_bytes: audio.file.length, source: input.source }
          },
          audio.file
        )
        if (Option.isSome(overridden)) {
          return {
            text: overridden.value.trim(),
            durationSeconds: audio.durationSeconds,
            language: null,
            engine: "hook"
          } satisfies Transcription
        }
        const result = yield* llm.transcribe({
          ...(input.model !== undefined ? { model: input.model } : {}),
          audio: audio.file,
          fileName: `audio.${audio.format.extension}`,
          mimeType: audio.format.mimeType,
          audioSeconds: audio.durationSeconds,
          usage: input.usage
        })
        return {
          text: result.text.trim(),
          durationSeconds: audio.durationSeconds ?? result.durationSeconds,
          language: result.language,
          engine: input.model ?? "default"
        } satisfies Transcription
      })

    return { ...traced("Speech", { transcribe } as const), limits, keepAudioBytes: config.keepAudioBytes }
  }),
  dependencies: [Hooks.Default, Llm.Default]
}) {}
