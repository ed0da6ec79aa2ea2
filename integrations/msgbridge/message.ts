/**
 * The chat server's message and webhook event, as Schemas: what is read from the wire is decoded
 * here and nowhere else. `isFromMe` arrives as a boolean or as a string; `dateCreated` as
 * milliseconds (a number or a numeric string). A message without a `guid` (the spec's field list
 * has none) gets one derived from the event itself (`derivedGuid`), so a redelivery of the same
 * event is still a duplicate.
 */
import { Either, ParseResult, Schema } from "effect"
import * as crypto from "node:crypto"

const Flag = Schema.Union(
  Schema.Boolean,
  Schema.transform(Schema.Literal("true", "false", "1", "0"), Schema.Boolean, {
    strict: true,
    decode: (text) => text === "true" || text === "1",
    encode: (flag) => (flag ? "true" : "false")
  })
)

const Millis = Schema.Union(Schema.Number, Schema.NumberFromString)

const ChatMessageFields = Schema.Struct({
  guid: Schema.optional(Schema.NullOr(Schema.String)),
  tempGuid: Schema.optional(Schema.NullOr(Schema.String)),
  text: Schema.optionalWith(Schema.NullOr(Schema.String), { default: () => null }),
  isFromMe: Schema.optionalWith(Flag, { default: () => false }),
  dateCreated: Schema.optional(Schema.NullOr(Millis)),
  handle: Schema.optional(Schema.NullOr(Schema.Struct({ address: Schema.optional(Schema.String) }))),
  chats: Schema.optionalWith(Schema.Array(Schema.Struct({ guid: Schema.String.pipe(Schema.minLength(1)) })), { default: () => [] }),
  attachments: Schema.optionalWith(
    Schema.Array(
      Schema.Struct({
        transferName: Schema.optional(Schema.NullOr(Schema.String)),
        mimeType: Schema.optional(Schema.NullOr(Schema.String))
      })
    ),
    { default: () => [] }
  )
})

/** Marks an id the bridge derived (never a chat server's GUID, which has no such prefix). */
export const DERIVED_PREFIX = "derived:"

/**
 * The id of a message that came without a GUID: a hash of what makes the event that message — its
 * chat, sender, whether it is the account's own, creation time, text and attachments' names. The
 * same event delivered again hashes the same; two different messages differ in one of these (the
 * same text from the same sender in the same millisecond, without a GUID, counts as one message).
 */
export const derivedGuid = (message: Omit<typeof ChatMessageFields.Type, "guid">): string =>
  DERIVED_PREFIX + crypto.createHash("sha256").update(JSON.stringify([
    message.chats.map((chat) => chat.guid),
    message.handle?.address ?? null,
    message.isFromMe,
    message.dateCreated ?? null,
    message.text ?? "",
    message.attachments.map((a) => [a.transferName ?? null, a.mimeType ?? null])
  ])).digest("hex").slice(0, 32)

/** A chat server message, its `guid` always set (derived when the event had none). */
export const ChatMessage = Schema.transform(
  ChatMessageFields,
  Schema.typeSchema(Schema.Struct({ ...ChatMessageFields.fields, guid: Schema.String })),
  {
    strict: true,
    decode: (fields) => ({ ...fields, guid: fields.guid ? fields.guid : derivedGuid(fields) }),
    encode: (message) => message
  }
)
export type ChatMessage = typeof ChatMessage.Type

export const WebhookEvent = Schema.Struct({
  type: Schema.String.pipe(Schema.minLength(1)),
  data: Schema.optional(Schema.Unknown)
})

/** The decoded value, or what was wrong, for a 422 answer. */
export const decodeOr = <A, I>(schema: Schema.Schema<A, I>, input: unknown): { ok: true; value: A } | { ok: false; error: string } => {
  const decoded = Schema.decodeUnknownEither(schema, { errors: "all", onExcessProperty: "ignore" })(input)
  return Either.isRight(decoded)
    ? { ok: true, value: decoded.right }
    : {
      ok: false,
      error: ParseResult.ArrayFormatter.formatErrorSync(decoded.left).map((i) => `${i.path.join(".") || "body"}: ${i.message}`).join("; ")
    }
}

/** The text a bot reads: the message's text, or what it carried when it has none. */
export const contentOf = (message: ChatMessage): string => {
  const text = (message.text ?? "").replace(/\uFFFC/g, "").trim()
  const attached = message.attachments.map((a) => a.transferName || a.mimeType || "a file")
  if (attached.length === 0) return text
  return [text, `(attached: ${attached.join(", ")})`].filter(Boolean).join("\n")
}
