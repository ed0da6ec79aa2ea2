/** Workflow runs with their steps: approve a step at its gate, skip or retry one, cancel a run. */
import { useState } from "react"
import type { WorkflowRun, WorkflowStep } from "../../../workflows/Model.ts"
import type { PageProps } from "../pages.ts"
import { allows } from "../scopes.ts"
import { ConfirmDialog } from "../ui/Dialog.tsx"
import { Select } from "../ui/Field.tsx"
import { JsonView } from "../ui/Json.tsx"
import { Section, StatusBadge, When } from "../ui/Page.tsx"
import { scrollRegion } from "../ui/scrollRegion.ts"
import { useAction, useLoad, usePoll } from "../ui/useLoad.ts"

const runStatuses = ["running", "waiting", "complete", "failed", "cancelled"] as const

type Badge = "ok" | "warn" | "bad" | "off"
const stateOf = (status: string): Badge =>
  status === "complete"
    ? "ok"
    : status === "failed"
    ? "bad"
    : status === "running" || status === "waiting" || status === "waiting_approval"
    ? "warn"
    : "off"

const StepRow = (
  { run, step, act, busy, canWrite }: {
    readonly run: WorkflowRun
    readonly step: WorkflowStep
    readonly act: (verb: "approve" | "skip" | "retry", step: string) => void
    readonly busy: boolean
    readonly canWrite: boolean
  }
) => {
  const open = run.status === "running" || run.status === "waiting" || run.status === "failed"
  return (
    <tr data-step={step.id}>
      <td className="mono">{step.id}</td>
      <td>
        <StatusBadge state={stateOf(step.status)} label={step.status.replace("_", " ")} />
      </td>
      <td className="num">{step.attempts}</td>
      <td>
        <When at={step.started_at} />
      </td>
      <td>
        {step.result
          ? (
            <details>
              <summary>result</summary>
              <JsonView value={step.result} label={`Result of ${step.id}`} />
            </details>
          )
          : null}
        {step.error ? <span className="error">{step.error}</span> : null}
      </td>
      <td className="row">
        {canWrite && step.status === "waiting_approval"
          ? (
            <button
              type="button"
              className="small primary"
              disabled={busy}
              onClick={() => act("approve", step.id)}
              aria-label={`Approve ${step.id}`}
            >
              Approve
            </button>
          )
          : null}
        {canWrite && open && (step.status === "pending" || step.status === "waiting_approval" || step.status === "failed") ?
          (
            <button type="button" className="small" disabled={busy} onClick={() => act("skip", step.id)} aria-label={`Skip ${step.id}`}>
              Skip
            </button>
          ) :
          null}
        {canWrite && step.status === "failed"
          ? (
            <button type="button" className="small" disabled={busy} onClick={() => act("retry", step.id)} aria-label={`Retry ${step.id}`}>
              Retry
            </button>
          )
          : null}
      </td>
    </tr>
  )
}

const RunCard = ({ run, auth, onChanged }: Pick<PageProps, "auth"> & { readonly run: WorkflowRun; readonly onChanged: () => void }) => {
  const action = useAction()
  const [confirmCancel, setConfirmCancel] = useState(false)
  const canWrite = allows(auth, ["workflows", "approve"])
  const act = async (verb: "approve" | "skip" | "retry", step: string) => {
    const path = { id: run.id, step }
    const done = await action.run(() =>
      auth.call((
        client
      ) => (verb === "approve"
        ? client.workflows.approve({ path })
        : verb === "skip"
        ? client.workflows.skip({ path })
        : client.workflows.retry({ path }))
      )
    )
    if (done) onChanged()
  }
  const cancel = async () => {
    if (await action.run(() => auth.call((client) => client.workflows.cancel({ path: { id: run.id } })))) {
      setConfirmCancel(false)
      onChanged()
    }
  }
  return (
    <article className="run" aria-label={`Run ${run.id}`} data-run-id={run.id}>
      <header className="row">
        <strong>{run.workflow_id}</strong>
        <StatusBadge state={stateOf(run.status)} label={run.status} />
        <span className="muted">
          by {run.triggered_by} · <When at={run.created_at} />
        </span>
        <span className="spacer" />
        {allows(auth, ["workflows", "cancel"]) && (run.status === "running" || run.status === "waiting") ?
          (
            <button
              type="button"
              className="small stop"
              onClick={() => {
                action.setError(undefined)
                setConfirmCancel(true)
              }}
            >
              Cancel run
            </button>
          ) :
          null}
      </header>
      {Object.keys(run.params).length > 0
        ? <p className="muted mono">{Object.entries(run.params).map(([k, v]) => `${k}=${JSON.stringify(v)}`).join(" · ")}</p>
        : null}
      {run.error ? <p className="error">{run.error}</p> : null}
      {action.error && !confirmCancel ? <p role="alert" className="error">{action.error}</p> : null}
      <div {...scrollRegion}>
        <table className="data" aria-label={`Steps of run ${run.id}`}>
          <thead>
            <tr>
              <th>Step</th>
              <th>Status</th>
              <th className="num">Attempts</th>
              <th>Started</th>
              <th>Outcome</th>
              <th>
                <span className="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {run.steps.map((step) => (
              <StepRow
                key={step.id}
                run={run}
                step={step}
                act={(verb, id) => void act(verb, id)}
                busy={action.busy}
                canWrite={canWrite}
              />
            ))}
          </tbody>
        </table>
      </div>
      <ConfirmDialog
        open={confirmCancel}
        title="Cancel run"
        message={
          <>
            Stop this run of <strong>{run.workflow_id}</strong>? Its remaining steps do not run.
          </>
        }
        confirmLabel="Cancel run"
        onConfirm={() => void cancel()}
        onClose={() => setConfirmCancel(false)}
        busy={action.busy}
        error={action.error}
      />
    </article>
  )
}

/** Runs, newest first (of one workflow when given), refreshed while any is in progress. */
export const Runs = (
  { auth, workflowId, refreshKey }: Pick<PageProps, "auth"> & { readonly workflowId?: string; readonly refreshKey?: number }
) => {
  const [status, setStatus] = useState("")
  const runs = useLoad(
    () =>
      auth.call((client) =>
        client.workflows.runs({
          urlParams: {
            limit: 50,
            ...(workflowId ? { workflow_id: workflowId } : {}),
            ...(status ? { status: status as (typeof runStatuses)[number] } : {})
          }
        })
      ),
    [auth, workflowId, status, refreshKey]
  )
  const live = (runs.data ?? []).some((run) => run.status === "running" || run.status === "waiting")
  usePoll(runs.reload, 2_000, live)
  return (
    <Section title="Runs" actions={<button type="button" className="small" onClick={() => void runs.reload()}>Refresh</button>}>
      <div className="grid-4">
        <Select
          label="Run status"
          value={status}
          onChange={setStatus}
          options={[{ value: "", label: "Any" }, ...runStatuses.map((s) => ({ value: s, label: s }))]}
        />
      </div>
      {runs.error ? <p role="alert" className="error">{runs.error}</p> : null}
      <div className="stack">
        {(runs.data ?? []).map((run) => <RunCard key={run.id} run={run} auth={auth} onChanged={() => void runs.reload()} />)}
        {runs.data && runs.data.length === 0 ? <p className="muted">No runs yet.</p> : null}
      </div>
    </Section>
  )
}
