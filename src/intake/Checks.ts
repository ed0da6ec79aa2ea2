/**
 * What every message is checked against before anything of it is stored, whatever surface sent
 * it: its length, its images' count and size (runtime settings: 422 past them), and its
 * references to uploads made whole.
 */
import { Effect } from "effect"
import { Attachments } from "../attachments/Attachments.ts"
import type { PrincipalShape } from "../auth/Principal.ts"
import { ValidationError } from "../contract/Errors.ts"
import { decodedBytes, type ImageAttachment, isReference } from "../sessions/Attachments.ts"
import { AttachmentMaxBytes, AttachmentMaxCount, ChatMessageMaxChars } from "../settings/Model.ts"
import { Settings } from "../settings/Settings.ts"
import { traced } from "../telemetry/Spans.ts"
import type { ChatRequest } from "./Model.ts"

const tooMany = (maxCount: number) =>
  ValidationError.single(
    ["body", "attachments"],
    `At most ${maxCount} attachments per message (ATTACHMENT_MAX_COUNT)`,
    "too_many_attachments"
  )

export class IntakeChecks extends Effect.Service<IntakeChecks>()("cairn/IntakeChecks", {
  effect: Effect.gen(function*() {
    const settings = yield* Settings
    const uploads = yield* Attachments

    /** CHAT_MESSAGE_MAX_CHARS (a runtime setting): a longer message text is a 422 at `loc`. */
    const checkMessageLength = (text: string, loc: ReadonlyArray<string | number>) =>
      Effect.flatMap(settings.get(ChatMessageMaxChars), (maxChars) =>
        text.length > maxChars
          ? ValidationError.single(
            loc,
            `The message is ${text.length} characters; at most ${maxChars} are taken (CHAT_MESSAGE_MAX_CHARS)`,
            "string_too_long"
          )
          : Effect.void)

    /** The size and count limits of image attachments (runtime settings): 422 past them. */
    const checkAttachments = (attachments: ReadonlyArray<ImageAttachment>) =>
      Effect.gen(function*() {
        if (attachments.length === 0) return
        const maxCount = yield* settings.get(AttachmentMaxCount)
        if (attachments.length > maxCount) return yield* tooMany(maxCount)
        const maxBytes = yield* settings.get(AttachmentMaxBytes)
        for (const [index, attachment] of attachments.entries()) {
          const bytes = attachment.data === undefined ? 0 : decodedBytes(attachment.data)
          if (bytes > maxBytes) {
            return yield* ValidationError.single(
              ["body", "attachments", index, "data"],
              `${attachment.name} is ${bytes} bytes; the limit is ${maxBytes} (ATTACHMENT_MAX_BYTES)`,
              "attachment_too_large"
            )
          }
        }
      })

    /**
     * The message with its references to uploads made whole: images inline (as if sent with
     * `data`), text files added to the message after its text, each in an `<attachment>` block.
     */
    const withUploads = (request: ChatRequest, principal: PrincipalShape) =>
      Effect.gen(function*() {
        const given = request.attachments.filter((attachment): attachment is ImageAttachment => !isReference(attachment))
        const seen = new Set<string>()
        const references = request.attachments.flatMap((attachment, index) =>
          isReference(attachment) && !seen.has(attachment.attachment_id) && seen.add(attachment.attachment_id)
            ? [{ index, id: attachment.attachment_id }]
            : []
        )
        if (references.length === 0) return { ...request, attachments: given }
        // Counted and sized before any file is read: a request naming one large upload many times reads nothing.
        const maxCount = yield* settings.get(AttachmentMaxCount)
        if (given.length + references.length > maxCount) return yield* tooMany(maxCount)
        const maxBytes = yield* settings.get(AttachmentMaxBytes)
        const { images, texts } = yield* uploads.resolve(principal, references, maxBytes)
        const blocks = texts.map((file) =>
          `<attachment name="${file.name.replace(/"/g, "'")}" type="${file.type}">\n${file.text}\n</attachment>`
        )
        return {
          ...request,
          message: [request.message, ...blocks].filter((part) => part.length > 0).join("\n\n"),
          attachments: [...given, ...images]
        }
      })

    return traced("IntakeChecks", { checkMessageLength, checkAttachments, withUploads } as const)
  }),
  dependencies: [Attachments.Default, Settings.Default]
}) {}
