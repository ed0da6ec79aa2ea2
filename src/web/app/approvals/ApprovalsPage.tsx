/**
 * The approval inbox: tool calls held for a person, from any run (a chat, a task, a heartbeat, a
 * bridge message: docs/security.md), each with its tool, its arguments (credential-like values
 * masked by the server) and why it was held; approve or deny with a click. Decided ones are listed
 * by their state. The list refreshes while the page is open.
 */
import { useState } from "react"
import type { ApprovalView } from "../../../chat/Model.ts"
import type { PageProps } from "../pages.ts"
import { allows } from "../scopes.ts"
import { JsonView } from "../ui/Json.tsx"
import { Page, When } from "../ui/Page.tsx"
import { useAction, useLoad, usePoll } from "../ui/useLoad.ts"

const states = ["pending", "approved", "denied", "expired"] as const
type State = typeof states[number]

/** Why the call waits, in words: the tool's policy, or the outside content in its run. */
const why = (approval: ApprovalView) =>
  approval.reason === "untrusted_content" ?
    `Outside content in the conversation: ${
      approval.origins.map((origin) =>
        origin.kind === "external" ? `${origin.source}${origin.detail ? ` (${origin.detail})` : ""}` : origin.kind
      )
        .join(", ")
    }` :
    "The bot's policy for this tool"

export default function ApprovalsPage({ auth }: PageProps) {
  const [state, setState] = useState<State>("pending")
  const approvals = useLoad(() => auth.call((client) => client.chat.approvals({ urlParams: { status: state, limit: 200 } })), [auth, state])
  usePoll(approvals.reload, 3_000)
  const canDecide = allows(auth, ["chat", "decideApproval"])
  const deciding = useAction()
  const [decided, setDecided] = useState<string | undefined>()
  const decide = async (approval: ApprovalView, approved: boolean) => {
    const done = await deciding.run(() =>
      auth.call((client) => client.chat.decideApproval({ path: { id: approval.approval_id }, payload: { approved } }))
    )
    if (done) setDecided(`${approved ? "Approved" : "Denied"} ${approval.tool}.`)
    await approvals.reload()
  }
  const list = approvals.data ?? []

  return (
    <Page title="Approvals" error={approvals.error} loading={approvals.loading && !approvals.data}>
      <ul className="row" aria-label="States">
        {states.map((name) => (
          <li key={name}>
            <button type="button" className="small" aria-pressed={state === name} onClick={() => setState(name)}>
              {name[0]!.toUpperCase() + name.slice(1)}
            </button>
          </li>
        ))}
      </ul>
      {deciding.error ? <p role="alert" className="error">{deciding.error}</p> : null}
      {decided ? <p role="status">{decided}</p> : null}
      {approvals.data && list.length === 0 ? <p className="muted">No {state} approvals.</p> : null}
      <ul className="stack approvals" aria-label="Approvals">
        {list.map((approval) => (
          <li key={approval.approval_id} data-approval-id={approval.approval_id}>
            <h2>
              {approval.tool} <span className="muted mono">{approval.approval_id.slice(0, 8)}</span>
            </h2>
            <p>
              {why(approval)} · asked <When at={approval.created_at} />
              {approval.decided_at
                ? (
                  <>
                    · {approval.status} <When at={approval.decided_at} />
                  </>
                )
                : null}
            </p>
            <JsonView value={approval.arguments} label={`Arguments of ${approval.tool}`} />
            {canDecide && approval.status === "pending" ?
              (
                <div className="row">
                  <button type="button" disabled={deciding.busy} onClick={() => void decide(approval, true)}>
                    Approve {approval.tool}
                  </button>
                  <button type="button" className="stop" disabled={deciding.busy} onClick={() => void decide(approval, false)}>
                    Deny {approval.tool}
                  </button>
                </div>
              ) :
              null}
          </li>
        ))}
      </ul>
    </Page>
  )
}
