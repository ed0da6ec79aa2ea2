/** Speech to text for companion clients: `POST /transcribe` (unversioned, as the spec keeps it). */
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Authentication } from "../auth/Authentication.ts"
import { RequiredScope } from "../auth/RequiredScope.ts"
import { BodyLimit } from "../contract/BodyLimit.ts"
import { detailBody } from "../contract/Errors.ts"
import { ProviderFailed } from "../providers/Errors.ts"
import { TranscriptionResponse } from "./Model.ts"

export class SpeechApi extends HttpApiGroup.make("speech")
  .add(
    HttpApiEndpoint.post("transcribe", "/transcribe")
      // Documented as raw PCM; the handler also reads audio/* files and multipart (`file`).
      .setPayload(HttpApiSchema.Uint8Array({ contentType: "application/octet-stream" }))
      .addSuccess(TranscriptionResponse)
      .addError(detailBody(ProviderFailed))
      .annotate(BodyLimit, "audio")
      .annotate(RequiredScope, "chat")
      .annotate(
        OpenApi.Description,
        "Transcribe audio: `application/octet-stream` is float32 little-endian PCM, 16 kHz, mono; an audio type (audio/wav, audio/mp4 (m4a), audio/aac, audio/mpeg, audio/ogg, audio/webm, audio/flac, audio/3gpp, audio/amr) is an encoded file; `multipart/form-data` carries the file in a `file` field. Answers {text, duration_s?, language?}"
      )
  )
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Speech")
{}
