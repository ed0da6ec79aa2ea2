/**
 * Mission control: the integration's dashboard (channels and their last activity, runs in
 * progress, queued and failed tasks, open todos, upcoming heartbeats, integrations' status) and the
 * bots' todos, added and completed here. Its other routes (the workspace file proxy) serve
 * processes outside Cairn.
 */
import { useState } from "react"
import type { Overview, TodoItem } from "../../../sdk/Capabilities.ts"
import type { PageProps } from "../pages.ts"
import { Dialog } from "../ui/Dialog.tsx"
import { TextArea, TextField } from "../ui/Field.tsx"
import { Page, Section, StatusBadge, When } from "../ui/Page.tsx"
import { useAction, useLoad, usePoll } from "../ui/useLoad.ts"
import { missionRoute, missionScopes } from "./route.ts"

const integrationState = (
  status: string
) => (status === "ready" ? "ok" : status === "failed" ? "bad" : status === "partial" ? "warn" : "off")

const Stat = ({ label, value, tone }: { readonly label: string; readonly value: number; readonly tone?: "bad" | "warn" }) => (
  <div className={`stat${tone && value > 0 ? ` ${tone}` : ""}`} role="group" aria-label={label}>
    <strong>{value}</strong>
    <span className="muted">{label}</span>
  </div>
)

const AddTodo = (
  { auth, open, onClose, onAdded }: Pick<PageProps, "auth"> & {
    readonly open: boolean
    readonly onClose: () => void
    readonly onAdded: () => void
  }
) => {
  const [title, setTitle] = useState("")
  const [notes, setNotes] = useState("")
  const [bot, setBot] = useState("")
  const action = useAction()
  const add = async () => {
    const made = await action.run(() =>
      missionRoute<TodoItem>(auth, "/todos", {
        method: "POST",
        body: { title, ...(notes ? { notes } : {}), ...(bot.trim() ? { bot_id: bot.trim() } : {}) }
      })
    )
    if (made) {
      setTitle("")
      setNotes("")
      onAdded()
    }
  }
  return (
    <Dialog
      title="Add a todo"
      open={open}
      onClose={onClose}
      onSubmit={() => void add()}
      submitLabel="Add todo"
      busy={action.busy}
      error={action.error}
    >
      <TextField label="Title" required value={title} onChange={setTitle} />
      <TextField label="Bot" value={bot} onChange={setBot} placeholder="default" />
      <TextArea label="Notes" value={notes} onChange={setNotes} />
    </Dialog>
  )
}

const ChannelsSection = ({ channels }: { readonly channels: Overview["channels"] }) => (
  <Section title="Channels">
    <table className="data" aria-label="Channels">
      <thead>
        <tr>
          <th>Channel</th>
          <th>Bot</th>
          <th>Last activity</th>
        </tr>
      </thead>
      <tbody>
        {channels.map((channel) => (
          <tr key={channel.id}>
            <td>{channel.name}</td>
            <td>{channel.bot_id}</td>
            <td>
              <When at={channel.last_activity_at} />
            </td>
          </tr>
        ))}
      </tbody>
    </table>
    {channels.length === 0 ? <p className="muted">No channels.</p> : null}
  </Section>
)

/** The open todos, each completed here; `onChanged` reloads the dashboard after one is. */
const TodosSection = ({ auth, todos, canWrite, onAdd, onChanged }: Pick<PageProps, "auth"> & {
  readonly todos: Overview["todos"]
  readonly canWrite: boolean
  readonly onAdd: () => void
  readonly onChanged: () => Promise<void>
}) => {
  const action = useAction()
  const complete = async (id: string) => {
    if (await action.run(() => missionRoute(auth, `/todos/${encodeURIComponent(id)}/complete`, { method: "POST" }))) {
      await onChanged()
    }
  }
  return (
    <Section
      title="Todos"
      actions={canWrite
        ? (
          <button
            type="button"
            className="small"
            onClick={onAdd}
          >
            Add todo
          </button>
        )
        : null}
    >
      {action.error ? <p role="alert" className="error">{action.error}</p> : null}
      <ul className="plain-list" aria-label="Open todos">
        {todos.map((todo) => (
          <li key={todo.id} className="row">
            <span>{todo.title}</span>
            <span className="chip">{todo.bot_id}</span>
            {todo.due_at
              ? (
                <span className="muted">
                  due <When at={todo.due_at} />
                </span>
              )
              : null}
            <span className="spacer" />
            {canWrite
              ? (
                <button
                  type="button"
                  className="small"
                  disabled={action.busy}
                  onClick={() => void complete(todo.id)}
                  aria-label={`Complete ${todo.title}`}
                >
                  Done
                </button>
              )
              : null}
          </li>
        ))}
      </ul>
      {todos.length === 0 ? <p className="muted">No open todos.</p> : null}
    </Section>
  )
}

/** The next heartbeat of each channel that has one, by the channel's name. */
const HeartbeatsSection = ({ heartbeats, channels }: {
  readonly heartbeats: Overview["heartbeats"]
  readonly channels: Overview["channels"]
}) => (
  <Section title="Heartbeats">
    <ul className="plain-list">
      {heartbeats.map((beat) => {
        const channel = channels.find((c) => c.id === beat.channel_id)
        return (
          <li key={beat.channel_id}>
            {channel?.name ?? beat.channel_id}{" "}
            <span className="muted">
              next <When at={beat.next_at} />
            </span>
          </li>
        )
      })}
    </ul>
    {heartbeats.length === 0 ? <p className="muted">No heartbeats scheduled.</p> : null}
  </Section>
)

export default function MissionControlPage({ auth }: PageProps) {
  const dashboard = useLoad(() => missionRoute<Overview>(auth, "/dashboard"), [auth])
  usePoll(dashboard.reload, 10_000)
  const [adding, setAdding] = useState(false)
  const data = dashboard.data
  return (
    <Page
      title="Mission control"
      error={dashboard.error}
      loading={dashboard.loading && !data}
      actions={<button type="button" onClick={() => void dashboard.reload()}>Refresh</button>}
    >
      {data ?
        (
          <>
            <div className="stats" aria-label="At a glance">
              <Stat label="Runs in progress" value={data.active_runs.length} />
              <Stat label="Tasks queued" value={data.tasks.queued} />
              <Stat label="Tasks running" value={data.tasks.running} />
              <Stat label="Tasks failed" value={data.tasks.failed.length} tone="bad" />
              <Stat label="Open todos" value={data.todos.length} />
            </div>
            <div className="grid-2">
              <ChannelsSection channels={data.channels} />
              <Section title="Runs in progress">
                <ul className="plain-list">
                  {data.active_runs.map((run) => (
                    <li key={run.run_id}>
                      <strong>{run.bot_id}</strong>{" "}
                      <span className="muted">
                        since <When at={run.started_at} />
                      </span>
                    </li>
                  ))}
                </ul>
                {data.active_runs.length === 0 ? <p className="muted">Nothing running.</p> : null}
              </Section>
              <TodosSection
                auth={auth}
                todos={data.todos}
                canWrite={auth.can(missionScopes.write)}
                onAdd={() => setAdding(true)}
                onChanged={dashboard.reload}
              />
              <HeartbeatsSection heartbeats={data.heartbeats} channels={data.channels} />
              <Section title="Failed tasks">
                <ul className="plain-list">
                  {data.tasks.failed.map((task) => (
                    <li key={task.id}>
                      <strong>{task.bot_id}</strong> <When at={task.completed_at} />
                      <div className="error small-text">{task.error ?? "no reason given"}</div>
                    </li>
                  ))}
                </ul>
                {data.tasks.failed.length === 0 ? <p className="muted">None.</p> : null}
              </Section>
              <Section title="Integrations">
                <ul className="plain-list">
                  {data.integrations.map((integration) => (
                    <li key={integration.id} className="row">
                      <span>{integration.id}</span>
                      <span className="spacer" />
                      <StatusBadge state={integrationState(integration.status)} label={integration.status.replace("_", " ")} />
                    </li>
                  ))}
                </ul>
              </Section>
            </div>
          </>
        ) :
        null}
      <AddTodo
        auth={auth}
        open={adding}
        onClose={() => setAdding(false)}
        onAdded={() => {
          setAdding(false)
          void dashboard.reload()
        }}
      />
    </Page>
  )
}
