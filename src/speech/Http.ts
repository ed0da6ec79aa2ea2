import { HttpApiBuilder, HttpIncomingMessage, HttpServerRequest } from "@effect/platform"
import { Effect, Option } from "effect"
import { CairnApi } from "../Api.ts"
import { Principal } from "../auth/Principal.ts"
import { ValidationError } from "../contract/Errors.ts"
import { multipartFile } from "../http/Upload.ts"
import { audioFormats, formatOfMimeType, formatOfUpload, type PreparedAudio, prepareFile, preparePcm } from "./Audio.ts"
import { TranscriptionResponse } from "./Model.ts"
import { Speech, speechFailure } from "./Speech.ts"

const acceptedTypes = `application/octet-stream (float32 PCM), multipart/form-data, or ${audioFormats.map((f) => f.mimeType).join(", ")}`

const refuse = (loc: ReadonlyArray<string>, message: string, type = "invalid_audio") => ValidationError.single(loc, message, type)

export const SpeechHttpLive = HttpApiBuilder.group(CairnApi, "speech", (handlers) =>
  Effect.gen(function*() {
    const speech = yield* Speech
    const limits = speech.limits
    const tooLarge = refuse(
      ["body"],
      `The audio could not be read whole: at most ${limits.maxBytes} bytes are taken (TRANSCRIBE_MAX_BYTES)`
    )

    const rawBody = (request: HttpServerRequest.HttpServerRequest) =>
      request.arrayBuffer.pipe(
        HttpIncomingMessage.withMaxBodySize(Option.some(limits.maxBytes)),
        Effect.map((buffer) => new Uint8Array(buffer)),
        Effect.catchAll(() => tooLarge)
      )

    /** The `file` field of a multipart body, with the format its type or name gives. */
    const fileOf = (request: HttpServerRequest.HttpServerRequest) =>
      Effect.gen(function*() {
        const found = yield* multipartFile(request, { field: "file", maxBytes: limits.maxBytes }).pipe(Effect.catchAll(() => tooLarge))
        if (!found) return yield* refuse(["body", "file"], "A multipart body needs the audio in a `file` field", "missing")
        const format = formatOfUpload(found.contentType, found.name)
        if (!format) {
          return yield* refuse(
            ["body", "file"],
            `Unknown audio type for ${found.name}: send one of ${acceptedTypes}`,
            "unsupported_audio_type"
          )
        }
        return yield* checked(prepareFile(found.bytes, format, limits))
      })

    const checked = (prepared: PreparedAudio | string) =>
      typeof prepared === "string" ? refuse(["body"], prepared) : Effect.succeed(prepared)

    /** The audio a request carries, by its Content-Type; 422 when it is not what it says. */
    const audioOf = (request: HttpServerRequest.HttpServerRequest) =>
      Effect.gen(function*() {
        const contentType = (request.headers["content-type"] ?? "application/octet-stream").toLowerCase()
        if (contentType.startsWith("multipart/form-data")) return yield* fileOf(request)
        if (contentType.startsWith("application/octet-stream")) return yield* checked(preparePcm(yield* rawBody(request), limits))
        const format = formatOfMimeType(contentType)
        if (!format) {
          return yield* refuse(
            ["header", "content-type"],
            `Unsupported Content-Type ${contentType}: send ${acceptedTypes}`,
            "unsupported_audio_type"
          )
        }
        return yield* checked(prepareFile(yield* rawBody(request), format, limits))
      })

    return handlers.handleRaw("transcribe", ({ request }) =>
      Effect.gen(function*() {
        const principal = yield* Principal
        const audio = yield* audioOf(request)
        const result = yield* speech
          .transcribe({ audio, source: "api", usage: { source: "speech", principalKind: principal.kind, principalId: principal.id } })
          .pipe(Effect.catchTag("LlmError", speechFailure))
        return new TranscriptionResponse({
          text: result.text,
          ...(result.durationSeconds !== null ? { duration_s: Math.round(result.durationSeconds * 1000) / 1000 } : {}),
          ...(result.language !== null ? { language: result.language } : {})
        })
      }))
  }))
