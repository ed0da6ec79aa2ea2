/**
 * `cairn approvals list|approve|deny`: the approval inbox (`GET /api/v1/approvals`) from a
 * terminal. A call a run holds for a person (the bot's tool policy, or outside content in its
 * context: docs/security.md) is listed with its tool, arguments (masked) and why; `approve` and
 * `deny` take its id, or the start of it (the code the chat notice shows).
 */
import { Args, Command, Options } from "@effect/cli"
import { Effect, Option } from "effect"
import type { CairnClient } from "../client.ts"
import { answerCommand } from "./Connection.ts"
import { wholeId } from "./Ids.ts"
import { inline, style, table } from "./Output.ts"

const statuses = ["pending", "approved", "denied", "expired"] as const

/** An approval as the API answers it (the typed client's type: the CLI does not import the chat domain). */
type ApprovalView = Extract<
  Effect.Effect.Success<ReturnType<CairnClient["chat"]["approvals"]>>,
  ReadonlyArray<{ readonly approval_id: string }>
>[number]

/** An origin as the table shows it: `mail`, `web (example.com)`. */
const originText = (origin: ApprovalView["origins"][number]) =>
  origin.kind === "external" ? `${origin.source}${origin.detail ? ` (${origin.detail})` : ""}` : origin.kind

const why = (approval: ApprovalView) =>
  approval.reason === "untrusted_content" ? `outside content: ${approval.origins.map(originText).join(", ")}` : "tool policy"

const approvalsList = answerCommand(
  "list",
  {
    status: Options.choice("status", statuses).pipe(
      Options.withDescription("Approvals in this state (default: pending)"),
      Options.optional
    ),
    session: Options.text("session").pipe(Options.withDescription("Only this session's"), Options.optional),
    limit: Options.integer("limit").pipe(Options.withDescription("At most this many (1-500)"), Options.withDefault(100))
  },
  (client, flags) =>
    client.chat.approvals({
      urlParams: {
        limit: flags.limit,
        ...(Option.isSome(flags.status) ? { status: flags.status.value } : {}),
        ...(Option.isSome(flags.session) ? { session_id: flags.session.value } : {})
      }
    }),
  (approvals) =>
    approvals.length === 0 ? "No approvals." : table(
      ["ID", "STATUS", "TOOL", "WHY", "CREATED", "ARGUMENTS"],
      approvals.map((approval) => [
        approval.approval_id.slice(0, 8),
        approval.status,
        approval.tool,
        why(approval),
        approval.created_at.slice(0, 16).replace("T", " "),
        inline(JSON.stringify(approval.arguments), 120)
      ])
    )
).pipe(Command.withDescription("List the calls waiting for a decision (or decided ones), newest first"))

/** The pending approvals' ids, where a prefix is looked for. */
const pendingIds = (client: CairnClient) =>
  Effect.map(client.chat.approvals({ urlParams: { limit: 500 } }), (approvals) => approvals.map((approval) => approval.approval_id))

const approvalId = Args.text({ name: "id" }).pipe(
  Args.withDescription("The approval's id, or the start of it (the code a chat notice shows)")
)

const decide = (name: "approve" | "deny") =>
  answerCommand(
    name,
    { id: approvalId },
    (client, { id }) =>
      Effect.flatMap(
        wholeId("pending approval", id, pendingIds(client)),
        (id) => client.chat.decide({ path: { id }, payload: { approved: name === "approve" } })
      ),
    (decision) =>
      decision.approved
        ? `${style.green("Approved")} ${decision.approval_id}: the call runs`
        : `${style.red("Denied")} ${decision.approval_id}: the call is not run`
  ).pipe(
    Command.withDescription(
      name === "approve" ? "Approve a pending call: it runs" : "Deny a pending call: the model is told it was not run"
    )
  )

export const approvalsCommand = Command.make("approvals").pipe(
  Command.withDescription("Approvals: list, approve, deny the tool calls runs hold for a person"),
  Command.withSubcommands([approvalsList, decide("approve"), decide("deny")])
)
