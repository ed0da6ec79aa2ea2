/** `POST /transcribe`: what it answers. The request is a raw body (see Api.ts). */
import { Schema } from "effect"

export class TranscriptionResponse extends Schema.Class<TranscriptionResponse>("TranscriptionResponse")({
  text: Schema.String,
  /** The audio's length in seconds, when it is known (raw PCM and WAV, or the engine says it). */
  duration_s: Schema.optionalWith(Schema.Number, { exact: true }),
  /** The spoken language, when the engine says it. */
  language: Schema.optionalWith(Schema.String, { exact: true })
}) {}
