/**
 * A conversation's branches, settings and transfer, for `Sessions`: a branch at a message (the
 * chat's edit and resend, and regenerate: both branches stay reachable through the family), the
 * conversation's own model, instructions and temperature, and its export and import as JSON.
 */
import { Effect, Option, Schema } from "effect"
import type { PrincipalShape } from "../auth/Principal.ts"
import type { BotNotFound } from "../bots/Errors.ts"
import { type Forbidden, ValidationError } from "../contract/Errors.ts"
import { mayReach, ownerOf, requireBotAllowed } from "./Access.ts"
import { ImageAttachment } from "./Attachments.ts"
import type { SessionBranchesRepo, SessionSettings } from "./BranchRepo.ts"
import type { SessionNotFound } from "./Errors.ts"
import { exportFormat, type Message, type Session, SessionBranch, SessionExport } from "./Model.ts"
import type { SessionRow } from "./Repo.ts"

/** A stored attachment that is an image (voice kept with a message is not sent again). */
const decodeImage = Schema.decodeUnknownOption(ImageAttachment)

export const branchMethods = (deps: {
  readonly repo: SessionBranchesRepo
  readonly reach: (principal: PrincipalShape, id: string) => Effect.Effect<Session, SessionNotFound | Forbidden>
  readonly messages: (principal: PrincipalShape, id: string) => Effect.Effect<ReadonlyArray<Message>, SessionNotFound | Forbidden>
  readonly requireBot: (botId: string) => Effect.Effect<unknown, BotNotFound>
  readonly toSession: (row: SessionRow) => Session
  readonly notFound: (id: string) => SessionNotFound
}) => {
  const { repo, reach, toSession, notFound } = deps

  /** Changes the conversation's settings sent (the caller reached it). */
  const configure = (id: string, settings: SessionSettings) =>
    Effect.flatMap(repo.configure(id, settings), (row) => (row ? Effect.succeed(toSession(row)) : Effect.fail(notFound(id))))

  /** A branch of the conversation holding its messages before `messageId` (422 when that message is not the session's). */
  const fork = (principal: PrincipalShape, id: string, messageId: string) =>
    Effect.gen(function*() {
      yield* reach(principal, id)
      const row = yield* repo.fork(id, messageId)
      if (!row) {
        return yield* ValidationError.single(["body", "message_id"], "This message is not one of the conversation's", "unknown_message")
      }
      return toSession(row)
    })

  /** The conversation the session belongs to, and its branches the caller reaches, oldest first. */
  const family = (principal: PrincipalShape, id: string) =>
    Effect.gen(function*() {
      yield* reach(principal, id)
      const rows = yield* repo.family(id)
      return rows.filter((row) => mayReach(principal, row)).map(({ owner: _owner, bot_id: _bot, ...row }) => new SessionBranch(row))
    })

  const exportOf = (principal: PrincipalShape, id: string) =>
    Effect.gen(function*() {
      const session = yield* reach(principal, id)
      const messages = yield* deps.messages(principal, id)
      return new SessionExport({
        format: exportFormat,
        exported_at: new Date(),
        session: {
          id: session.id,
          title: session.title,
          bot_id: session.bot_id,
          model: session.model,
          system_prompt: session.system_prompt,
          temperature: session.temperature,
          created_at: session.created_at
        },
        messages: messages.map(({ role, content, created_at, metadata, tool_calls, tool_call_id, attachments }) => ({
          role,
          content,
          created_at,
          metadata,
          tool_calls,
          tool_call_id,
          attachments
        }))
      })
    })

  /** An export stored as a new conversation of the caller's, on `botId` and `clientId`. */
  const importFrom = (principal: PrincipalShape, botId: string, clientId: string, exported: SessionExport) =>
    Effect.gen(function*() {
      yield* requireBotAllowed(principal, botId)
      yield* deps.requireBot(botId)
      const row = yield* repo.importSession({ botId, clientId, owner: ownerOf(principal) }, exported)
      return toSession(row)
    })

  /**
   * The images of the user message `messageId` sent again in `session` (regenerate, edit and
   * resend): the message is the session's or the one it was branched from's (a branch starts
   * before the message it sends again); 422 otherwise.
   */
  const resentImages = (session: Pick<Session, "id" | "forked_from">, messageId: string) =>
    Effect.gen(function*() {
      const row = yield* repo.messageIn(messageId, [session.id, ...(session.forked_from ? [session.forked_from] : [])])
      if (!row || row.role !== "user") {
        return yield* ValidationError.single(
          ["body", "resend_of"],
          "This is not a user message of the conversation or of the one it was branched from",
          "unknown_message"
        )
      }
      return (row.attachments ?? []).flatMap((attachment) => Option.toArray(decodeImage(attachment)))
    })

  return { configure, fork, family, exportOf, importFrom, resentImages } as const
}
