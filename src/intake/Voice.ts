/**
 * Voice input in chat (`audio_data` + `audio_format`): checked before anything is stored, then
 * heard by the speech service once the session and bot are known. The transcript becomes the user
 * message; the audio is kept with it (within AUDIO_ATTACHMENT_MAX_BYTES), and a bot whose model
 * takes audio natively hears it itself.
 */
import { Effect } from "effect"
import type { PrincipalShape } from "../auth/Principal.ts"
import type { Bot } from "../bots/Model.ts"
import { ValidationError } from "../contract/Errors.ts"
import type { AudioAttachment } from "../sessions/Attachments.ts"
import { formatByExtension, type PreparedAudio, prepareFile } from "../speech/Audio.ts"
import { Speech, speechFailure } from "../speech/Speech.ts"
import type { ChatRequest } from "./Model.ts"

/** What the voice of a message said, and what of it is kept with the message. */
export interface Heard {
  readonly transcript: string
  readonly attachment: AudioAttachment | null
}

const refuse = (message: string, type = "invalid_audio") => ValidationError.single(["body", "audio_data"], message, type)

/** The message's text with what was said: the transcript, after any typed text. */
export const spokenText = (typed: string, transcript: string) => [typed.trim(), transcript].filter(Boolean).join("\n\n")

export class Voice extends Effect.Service<Voice>()("cairn/Voice", {
  effect: Effect.gen(function*() {
    const speech = yield* Speech

    /** The request's audio, checked (422 when it is not what it says); null without audio. */
    const prepare = (request: ChatRequest): Effect.Effect<PreparedAudio | null, ValidationError> => {
      if (request.audio_data === undefined) return Effect.succeed(null)
      if (request.audio_format === undefined) {
        return ValidationError.single(["body", "audio_format"], "audio_format (m4a, wav or webm) is required with audio_data", "missing")
      }
      const prepared = prepareFile(Buffer.from(request.audio_data, "base64"), formatByExtension(request.audio_format), speech.limits)
      return typeof prepared === "string" ? refuse(prepared) : Effect.succeed(prepared)
    }

    /**
     * Transcribes for `bot`. A native bot goes on without a transcript when none can be made (the
     * model hears the audio); any other bot's engine failure is the request's 502.
     */
    const hear = (
      audio: PreparedAudio,
      request: ChatRequest,
      bot: Bot,
      ids: { readonly sessionId: string; readonly channelId: string | null; readonly clientId: string },
      principal: PrincipalShape
    ) =>
      Effect.gen(function*() {
        if (bot.audio_input === "disabled") {
          return yield* refuse(`The bot ${bot.id} does not take voice input (audio_input: disabled)`, "audio_disabled")
        }
        const native = bot.audio_input === "native"
        const transcribed = speech.transcribe({
          audio,
          source: "chat",
          usage: { source: "speech", principalKind: principal.kind, principalId: principal.id, botId: bot.id, sessionId: ids.sessionId },
          ids: { bot_id: bot.id, session_id: ids.sessionId, channel_id: ids.channelId, client_id: ids.clientId }
        })
        const transcript = native
          ? yield* transcribed.pipe(
            Effect.map((result) => result.text),
            Effect.catchAll((error) => Effect.as(Effect.logWarning("No transcript for a native-audio bot's voice input", error), ""))
          )
          : (yield* transcribed.pipe(Effect.catchTag("LlmError", speechFailure))).text
        const keep = native || audio.file.length <= speech.keepAudioBytes
        const attachment: AudioAttachment | null = keep
          ? {
            type: "audio",
            mime_type: audio.format.mimeType,
            name: `voice.${audio.format.extension}`,
            data: request.audio_data!,
            ...(native ? { for_model: true } : {})
          }
          : null
        return { transcript, attachment } satisfies Heard
      })

    return { prepare, hear } as const
  }),
  dependencies: [Speech.Default]
}) {}
