/**
 * An approval told to where its run came from: the bridge chat the message arrived in, the Slack
 * thread (chatplatform), a webhook. The run waits in the approval inbox either way; this is how the
 * person hears of it without watching the inbox. The notice is posted through the run's dispatcher
 * (`post_message`), with the tool, its arguments (masked as in the audit) and why.
 *
 * How the person answers, the way chat bots ask for a confirmation:
 * - in a chat an integration brings in (the bridge), by replying `approve` or `deny` (also `yes`,
 *   `no`), optionally followed by the short code the notice shows when several wait. Only the
 *   account owner's reply counts (`user` origin, tasks/Injection.ts): a stranger in the chat, who
 *   may be the one who planted the instruction, cannot approve it;
 * - anywhere else (Slack, a webhook), with `cairn approvals approve <code>`, the web app, or
 *   `POST /api/v1/approvals/{id}/decide`.
 *
 * Where outsiders are in the chat itself (a bridge origin), the arguments are not posted there:
 * they may hold what the call would carry out, and the chat is where it would go.
 */
import { Effect } from "effect"
import { type ApprovalNotice, ApprovalOutlets } from "../agent/ApprovalOutlets.ts"
import { describeOrigin } from "../agent/Provenance.ts"
import type { TurnInput } from "../agent/Turn.ts"
import { maskArguments } from "../secrets/Patterns.ts"
import { traced } from "../telemetry/Spans.ts"
import { DelegatedPosts } from "./delivery/Delegated.ts"
import { Dispatchers } from "./delivery/Dispatchers.ts"

/** The code a reply may name: the approval id's first 8 characters. */
export const approvalCode = (approvalId: string) => approvalId.slice(0, 8)

/** Dispatch types that post somewhere a person cannot answer in (or nowhere at all). */
const noReplies = new Set(["chatplatform", "webhook"])
const silent = new Set(["none", "internal"])

const maxArguments = 600

const duration = (seconds: number) =>
  seconds % 3600 === 0 ? `${seconds / 3600} h` : seconds % 60 === 0 ? `${seconds / 60} min` : `${seconds} s`

/** The notice's text, in the words a person in a chat reads. */
export const approvalText = (notice: ApprovalNotice, options: { readonly botName: string; readonly replies: boolean }) => {
  const code = approvalCode(notice.approvalId)
  const args = JSON.stringify(maskArguments(notice.args))
  const outsidersHere = notice.origins.some((origin) => origin.source === "bridge")
  const why = notice.reason === "untrusted_content"
    ? `this conversation holds content from outside (${
      notice.origins.map(describeOrigin).join(", ")
    }), and ${notice.tool} can change or send things`
    : `the bot's settings ask for approval of ${notice.tool}`
  const lines = [
    `Approval needed (${code}): ${options.botName} wants to run ${notice.tool}.`,
    outsidersHere
      ? "Arguments: not shown in this chat (others are in it); see them with `cairn approvals` or in the web app."
      : `Arguments: ${args.length > maxArguments ? `${args.slice(0, maxArguments)}…` : args}`,
    `Why: ${why}.`,
    options.replies
      ? `Reply "approve" or "deny" (or "approve ${code}").`
      : `Decide with \`cairn approvals approve ${code}\` (or deny), or in the web app.`,
    notice.timeoutSeconds > 0
      ? `Not answered within ${duration(notice.timeoutSeconds)}, it is denied.`
      : "It is denied now: this bot does not wait."
  ]
  return lines.join("\n")
}

/**
 * Installs the approval outlet (agent/ApprovalOutlets.ts): a held call is posted where the run's
 * messages go (its dispatch, else its session's, else its channel's binding; the same destination
 * a delegated answer takes, DelegatedPosts), unless that is nowhere a person reads.
 */
export class ApprovalNotices extends Effect.Service<ApprovalNotices>()("cairn/ApprovalNotices", {
  effect: Effect.gen(function*() {
    const dispatchers = yield* Dispatchers
    const delegated = yield* DelegatedPosts
    const outlets = yield* ApprovalOutlets

    const announce = (turn: TurnInput, notice: ApprovalNotice) =>
      Effect.gen(function*() {
        const destination = yield* delegated.destination(turn)
        if (!destination || silent.has(destination.type)) return
        const text = approvalText(notice, { botName: turn.bot.name, replies: !noReplies.has(destination.type) })
        const posted = yield* dispatchers.postMessage(destination.type, destination.config, text, {
          botId: turn.bot.id,
          extraMetadata: { approval_id: notice.approvalId, approval_code: approvalCode(notice.approvalId) }
        })
        if (!posted) yield* Effect.logWarning(`The approval ${notice.approvalId} was not posted through ${destination.type}`)
      })

    const service = traced("ApprovalNotices", { announce } as const)
    yield* outlets.install(service.announce)
    return service
  }),
  dependencies: [Dispatchers.Default, DelegatedPosts.Default, ApprovalOutlets.Default]
}) {}
