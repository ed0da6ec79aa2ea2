/**
 * Tasks: background agent work (injected messages, heartbeats, integrations' runs, workflow steps),
 * filtered by status, bot and source; each inspected (prompt, result, error, delivery, timing) and a
 * pending one cancelled. The list refreshes while the page is open.
 */
import { useMemo, useState } from "react"
import type { Task } from "../../../tasks/Model.ts"
import type { PageProps } from "../pages.ts"
import { allows } from "../scopes.ts"
import { ConfirmDialog, Dialog } from "../ui/Dialog.tsx"
import { Select, TextField } from "../ui/Field.tsx"
import { JsonView } from "../ui/Json.tsx"
import { Page, StatusBadge, When } from "../ui/Page.tsx"
import { scrollRegion } from "../ui/scrollRegion.ts"
import { useConfirm, useLoad, usePoll } from "../ui/useLoad.ts"

const statuses = ["pending", "running", "complete", "failed", "cancelled"] as const
type Status = (typeof statuses)[number]

const stateOf = (
  status: Status
) => (status === "complete" ? "ok" : status === "failed" ? "bad" : status === "running" || status === "pending" ? "warn" : "off")

const iso = (date: Date | null) => (date ? date.toISOString() : null)

const durationOf = (task: Task) =>
  task.started_at && task.completed_at ? `${((task.completed_at.getTime() - task.started_at.getTime()) / 1000).toFixed(1)} s` : "—"

const TaskDetail = ({ task }: { readonly task: Task }) => (
  <div className="stack">
    <dl className="facts">
      <dt>Status</dt>
      <dd>
        <StatusBadge state={stateOf(task.status)} label={task.status} />
      </dd>
      <dt>Source</dt>
      <dd>{task.source}</dd>
      <dt>Bot</dt>
      <dd>{task.bot_id}</dd>
      <dt>Session</dt>
      <dd>
        <code>{task.session_id}</code>
      </dd>
      <dt>Attempts</dt>
      <dd>{task.attempts}</dd>
      <dt>Created</dt>
      <dd>
        <When at={iso(task.created_at)} />
      </dd>
      <dt>Started</dt>
      <dd>
        <When at={iso(task.started_at)} />
      </dd>
      <dt>Finished</dt>
      <dd>
        <When at={iso(task.completed_at)} />
      </dd>
      <dt>Took</dt>
      <dd>{durationOf(task)}</dd>
      <dt>Delivery</dt>
      <dd>{task.dispatch_type} · {task.delivery_status}{task.delivery_error ? ` (${task.delivery_error})` : ""}</dd>
    </dl>
    <h3>Prompt</h3>
    <JsonView value={task.prompt} label="Prompt" />
    {task.result !== null
      ? (
        <>
          <h3>Result</h3>
          <JsonView value={task.result} label="Result" />
        </>
      )
      : null}
    {task.error !== null
      ? (
        <>
          <h3>Error</h3>
          <p className="error" aria-label="Error">{task.error}</p>
        </>
      )
      : null}
    <h3>Execution config</h3>
    <JsonView value={task.execution_config} label="Execution config" />
    <h3>Dispatch config</h3>
    <JsonView value={task.dispatch_config} label="Dispatch config" />
  </div>
)

export default function TasksPage({ auth }: PageProps) {
  const [status, setStatus] = useState<"" | Status>("")
  const [bot, setBot] = useState("")
  const [source, setSource] = useState("")
  const [open, setOpen] = useState<Task | undefined>()
  const botFilter = bot.trim()
  const tasks = useLoad(
    () =>
      auth.call((client) =>
        client.tasks.list({ urlParams: { limit: 200, ...(status ? { status } : {}), ...(botFilter ? { bot_id: botFilter } : {}) } })
      ),
    [auth, status, botFilter]
  )
  usePoll(tasks.reload, 5_000)
  const sources = useMemo(() => [...new Set((tasks.data ?? []).map((task) => task.source))].sort(), [tasks.data])
  const shown = (tasks.data ?? []).filter((task) => !source || task.source === source)
  const canCancel = allows(auth, ["tasks", "cancel"])

  const cancelling = useConfirm((task: Task) => auth.call((client) => client.tasks.cancel({ path: { id: task.id } })), tasks.reload)

  return (
    <Page title="Tasks" error={tasks.error} loading={tasks.loading && !tasks.data}>
      <form className="grid-4" aria-label="Filter tasks" onSubmit={(event) => event.preventDefault()}>
        <Select
          label="Status"
          value={status}
          onChange={(value) => setStatus(value as "" | Status)}
          options={[{ value: "", label: "Any" }, ...statuses.map((s) => ({ value: s, label: s }))]}
        />
        <TextField label="Bot" value={bot} onChange={setBot} placeholder="any bot" />
        <Select
          label="Source"
          value={source}
          onChange={setSource}
          options={[{ value: "", label: "Any" }, ...sources.map((s) => ({ value: s, label: s }))]}
        />
      </form>
      {cancelling.error && !cancelling.target ? <p role="alert" className="error">{cancelling.error}</p> : null}
      <div {...scrollRegion}>
        <table className="data" aria-label="Tasks">
          <thead>
            <tr>
              <th>Created</th>
              <th>Status</th>
              <th>Source</th>
              <th>Bot</th>
              <th>Prompt</th>
              <th className="num">Attempts</th>
              <th>
                <span className="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {shown.map((task) => (
              <tr key={task.id} data-task-id={task.id}>
                <td>
                  <When at={iso(task.created_at)} />
                </td>
                <td>
                  <StatusBadge state={stateOf(task.status)} label={task.status} />
                </td>
                <td>{task.source}</td>
                <td>{task.bot_id}</td>
                <td className="clip" title={task.prompt}>{task.prompt}</td>
                <td className="num">{task.attempts}</td>
                <td className="row">
                  <button type="button" className="small" onClick={() => setOpen(task)} aria-label={`Inspect task ${task.id}`}>
                    Inspect
                  </button>
                  {canCancel && task.status === "pending" ?
                    (
                      <button
                        type="button"
                        className="small stop"
                        onClick={() => cancelling.ask(task)}
                        aria-label={`Cancel task ${task.id}`}
                      >
                        Cancel
                      </button>
                    ) :
                    null}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
        {tasks.data && shown.length === 0 ? <p className="muted">No tasks match.</p> : null}
      </div>
      <Dialog title="Task" open={open !== undefined} onClose={() => setOpen(undefined)} wide>
        {open ? <TaskDetail task={(tasks.data ?? []).find((task) => task.id === open.id) ?? open} /> : null}
      </Dialog>
      <ConfirmDialog
        {...cancelling.dialog}
        title="Cancel task"
        message={
          <>
            The pending task from <strong>{cancelling.target?.source}</strong> for bot <strong>{cancelling.target?.bot_id}</strong>{" "}
            will not run.
          </>
        }
        confirmLabel="Cancel task"
      />
    </Page>
  )
}
