/** Screening layer 4: the typed envelope a passed mail must decode into before it is delivered. */
import { Schema } from "effect"
import { maxTextLength } from "./text.ts"

const Level = Schema.Literal("none", "low", "medium", "high")
const Bounded = (max: number) => Schema.String.pipe(Schema.maxLength(max))

export const MailEnvelope = Schema.Struct({
  source: Schema.Literal("mailbox"),
  source_id: Bounded(998).pipe(Schema.minLength(1)),
  body: Bounded(maxTextLength),
  metadata: Schema.Struct({
    folder: Bounded(255),
    uid: Schema.Int.pipe(Schema.positive()),
    message_id: Bounded(998),
    from: Bounded(2000),
    to: Bounded(10_000),
    date: Bounded(100),
    subject: Bounded(2000),
    attachments: Schema.Array(Schema.Struct({ filename: Bounded(500), type: Bounded(255), size: Schema.Number.pipe(Schema.nonNegative()) }))
      .pipe(Schema.maxItems(500))
  }),
  risk: Schema.Struct({
    flags: Schema.Array(Schema.Struct({ check: Schema.String, level: Level, where: Schema.String, detail: Bounded(500) })),
    level: Level,
    classifier_reason: Bounded(2000)
  }),
  ingested_at: Schema.String
})
export type MailEnvelope = typeof MailEnvelope.Type
