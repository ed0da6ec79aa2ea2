/**
 * A message admitted: checked (scope, length, memory, the caller's running runs), its uploads and
 * voice read, its session and bot found, in that order so the cheap refusals come first. What comes
 * out (`Admitted`) is what intake stores, queues or runs.
 */
import { Effect } from "effect"
import { overRunLimit } from "../access/RunSlots.ts"
import type { PrincipalShape } from "../auth/Principal.ts"
import { grants } from "../auth/Scopes.ts"
import { Bots } from "../bots/Bots.ts"
import type { Bot } from "../bots/Model.ts"
import type { Channel } from "../channels/Model.ts"
import { Forbidden } from "../contract/Errors.ts"
import { Memory } from "../health/Memory.ts"
import { Runs } from "../runs/Runs.ts"
import { ownerOf } from "../sessions/Access.ts"
import type { ImageAttachment } from "../sessions/Attachments.ts"
import type { Session } from "../sessions/Model.ts"
import { Sessions } from "../sessions/Sessions.ts"
import { conversationTurn } from "../sessions/Settings.ts"
import { RunsPerCredentialMax } from "../settings/Model.ts"
import { Settings } from "../settings/Settings.ts"
import { IntakeChecks } from "./Checks.ts"
import type { ChatRequest } from "./Model.ts"
import { IntakeTarget } from "./Target.ts"
import { spokenText, Voice } from "./Voice.ts"

/** A message checked and addressed: what will be stored and who answers it. */
export interface Admitted {
  readonly request: ChatRequest & { readonly attachments: ReadonlyArray<ImageAttachment> }
  readonly session: Session
  readonly channel: Channel | null
  /** The bot with the conversation's instructions and temperature (sessions/Settings.ts). */
  readonly bot: Bot
  /** The model the turn asks for: the request's, else the conversation's; none for the channel's or bot's. */
  readonly modelOverride: string | undefined
  readonly text: string
  readonly attachments: ReadonlyArray<unknown>
  readonly transcript: string | null
  readonly credential: string
  readonly maxRuns: number
}

/** `admit(sent, principal)`: the message admitted, and whether it is voice in which nothing was heard. */
export const admission = Effect.gen(function*() {
  const bots = yield* Bots
  const settings = yield* Settings
  const runs = yield* Runs
  const voice = yield* Voice
  const checks = yield* IntakeChecks
  const target = yield* IntakeTarget
  const memory = yield* Memory
  const sessions = yield* Sessions

  return (sent: ChatRequest, principal: PrincipalShape) =>
    Effect.gen(function*() {
      // Internal dispatch writes into another session: that takes sessions:write, not only chat.
      if (sent.dispatch_type === "internal" && !grants(principal.scopes, "sessions:write")) {
        return yield* new Forbidden({ detail: "Missing required scope: sessions:write" })
      }
      yield* checks.checkMessageLength(sent.message, ["body", "message"])
      // Short of memory, no new run starts (503, Retry-After); a passive message only stores.
      if (!sent.passive) yield* memory.admit
      // A credential at its cap is refused before any work (uploads, voice, the session); the place
      // itself is taken when the run starts.
      const credential = ownerOf(principal)
      const maxRuns = yield* settings.get(RunsPerCredentialMax)
      if (!sent.passive && (yield* runs.runningFor(credential)) >= maxRuns) return yield* overRunLimit(maxRuns)
      const uploaded = yield* checks.withUploads(sent, principal)
      yield* checks.checkAttachments(uploaded.attachments)
      const audio = yield* voice.prepare(uploaded)
      const { session, channel } = yield* target.resolve(uploaded, principal)
      // Sent again (regenerate, edit and resend): the original message's images go with it.
      const again = sent.resend_of ? yield* sessions.resentImages(session, sent.resend_of) : []
      const request = again.length > 0 ? { ...uploaded, attachments: [...again, ...uploaded.attachments] } : uploaded
      if (again.length > 0) yield* checks.checkAttachments(request.attachments)
      // The conversation's own instructions, temperature and model (sessions/Settings.ts).
      const { bot, modelOverride } = conversationTurn(yield* bots.get(session.bot_id), session, request.model_override)
      const heard = audio
        ? yield* voice.hear(
          audio,
          request,
          bot,
          { sessionId: session.id, channelId: channel?.id ?? null, clientId: session.client_id },
          principal
        )
        : null
      const text = heard ? spokenText(request.message, heard.transcript) : request.message
      const admitted: Admitted = {
        request,
        session,
        channel,
        bot,
        modelOverride,
        text,
        attachments: heard?.attachment ? [...request.attachments, heard.attachment] : request.attachments,
        transcript: heard?.transcript ?? null,
        credential,
        maxRuns
      }
      const unheard = heard !== null && !text && request.attachments.length === 0 && !heard.attachment?.for_model
      return { admitted, unheard }
    })
})

/** The message as a task: queued when the run cannot start now, recorded finished when it ran at once. */
export const taskOf = ({ request, session, channel, bot, modelOverride, text, attachments }: Admitted) => ({
  source: "chat",
  botId: bot.id,
  sessionId: session.id,
  channelId: channel?.id ?? null,
  clientId: session.client_id,
  prompt: text,
  attachments,
  modelOverride: modelOverride ?? null,
  dispatchType: request.dispatch_type,
  dispatchConfig: request.dispatch_config
})
