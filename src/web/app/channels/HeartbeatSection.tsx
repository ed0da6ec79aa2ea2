/**
 * A channel's heartbeat: a prompt the bot answers on a schedule (every n seconds, or a cron line in
 * a time zone), quiet hours, and where the answer goes; its next slot and recent runs.
 */
import { useEffect, useState } from "react"
import type { Heartbeat, HeartbeatRun } from "../../../heartbeats/Model.ts"
import type { AuthSession } from "../../shared/session.ts"
import { allows } from "../scopes.ts"
import { EditForm } from "../ui/EditForm.tsx"
import { Checkbox, Select, TextArea, TextField } from "../ui/Field.tsx"
import { Section, StatusBadge, When } from "../ui/Page.tsx"
import { scrollRegion } from "../ui/scrollRegion.ts"
import { useAction, useLoad } from "../ui/useLoad.ts"

interface HeartbeatDraft {
  readonly enabled: boolean
  readonly prompt: string
  readonly cadence: "interval" | "cron"
  readonly interval_seconds: string
  readonly cron: string
  readonly timezone: string
  readonly quiet_start: string
  readonly quiet_end: string
  readonly only_when_something: boolean
  readonly catch_up: boolean
  readonly dispatch_type: string
}

const localZone = Intl.DateTimeFormat().resolvedOptions().timeZone

const draftOf = (heartbeat: Heartbeat | undefined): HeartbeatDraft => ({
  enabled: heartbeat?.enabled ?? true,
  prompt: heartbeat?.prompt ?? "",
  cadence: heartbeat?.cron ? "cron" : "interval",
  interval_seconds: String(heartbeat?.interval_seconds ?? 3600),
  cron: heartbeat?.cron ?? "",
  timezone: heartbeat?.timezone ?? localZone,
  quiet_start: heartbeat?.quiet_start ?? "",
  quiet_end: heartbeat?.quiet_end ?? "",
  only_when_something: heartbeat?.only_when_something ?? true,
  catch_up: heartbeat?.catch_up ?? false,
  dispatch_type: heartbeat?.dispatch_type ?? "none"
})

const runState = { posted: "ok", silent: "off", quiet: "off", running: "warn", failed: "bad" } as const

/**
 * The stored heartbeat (null when there is none) and the form's draft of it, which follows each
 * load; `submit` puts the draft, then reloads.
 */
const useHeartbeatSettings = (auth: AuthSession, channelId: string) => {
  // No heartbeat is a 404: the form starts empty then.
  const heartbeat = useLoad(
    () =>
      auth.call((client) => client.heartbeats.get({ path: { id: channelId } })).catch((failure: unknown) => {
        const tag = (failure as { _tag?: string })._tag
        if (tag === "NotFound" || tag === "HeartbeatNotFound") return null
        throw failure
      }),
    [auth, channelId]
  )
  const [draft, setDraft] = useState<HeartbeatDraft>(() => draftOf(undefined))
  const [saved, setSaved] = useState(false)
  const save = useAction()
  useEffect(() => {
    if (heartbeat.data !== undefined) setDraft(draftOf(heartbeat.data ?? undefined))
  }, [heartbeat.data])
  const change = (part: Partial<HeartbeatDraft>) => {
    setSaved(false)
    setDraft((current) => ({ ...current, ...part }))
  }
  const submit = async () => {
    const interval = Number(draft.interval_seconds)
    const stored = heartbeat.data ?? undefined
    const done = await save.run(() =>
      auth.call((client) =>
        client.heartbeats.put({
          path: { id: channelId },
          payload: {
            enabled: draft.enabled,
            prompt: draft.prompt,
            interval_seconds: draft.cadence === "interval" ? interval : null,
            cron: draft.cadence === "cron" ? draft.cron.trim() : null,
            timezone: draft.timezone.trim(),
            quiet_start: draft.quiet_start || null,
            quiet_end: draft.quiet_end || null,
            ends_at: stored?.ends_at?.toISOString() ?? null,
            only_when_something: draft.only_when_something,
            catch_up: draft.catch_up,
            dispatch_type: draft.dispatch_type.trim() || "none",
            // The stored settings of the dispatcher are sent back (secrets masked, which keeps them).
            dispatch_config: stored?.dispatch_config ?? {}
          }
        })
      )
    )
    if (done) {
      setSaved(true)
      await heartbeat.reload()
    }
  }
  return { heartbeat, draft, saved, save, change, submit }
}

/** The heartbeat's settings as fields: prompt, schedule (interval or cron), zone, dispatch, quiet hours. */
const HeartbeatFields = ({ draft, change }: {
  readonly draft: HeartbeatDraft
  readonly change: (part: Partial<HeartbeatDraft>) => void
}) => (
  <div className="stack">
    <Checkbox label="Heartbeat enabled" checked={draft.enabled} onChange={(enabled) => change({ enabled })} />
    <TextArea label="Heartbeat prompt" required rows={3} value={draft.prompt} onChange={(prompt) => change({ prompt })} />
    <div className="grid-2">
      <Select
        label="Schedule"
        value={draft.cadence}
        onChange={(cadence) => change({ cadence: cadence === "cron" ? "cron" : "interval" })}
        options={[
          { value: "interval", label: "Every n seconds" },
          { value: "cron", label: "Cron expression" }
        ]}
      />
      {draft.cadence === "interval" ?
        (
          <TextField
            label="Interval (seconds)"
            type="number"
            required
            value={draft.interval_seconds}
            onChange={(interval_seconds) => change({ interval_seconds })}
          />
        ) :
        <TextField label="Cron" required value={draft.cron} onChange={(cron) => change({ cron })} placeholder="0 9 * * 1-5" />}
      <TextField
        label="Time zone"
        value={draft.timezone}
        onChange={(timezone) => change({ timezone })}
        description="An IANA zone such as Europe/Oslo."
      />
      <TextField
        label="Dispatch to"
        value={draft.dispatch_type}
        onChange={(dispatch_type) => change({ dispatch_type })}
        description="The integration that posts the answer; none keeps it in the channel's session."
      />
      <TextField
        label="Quiet from"
        placeholder="22:00"
        value={draft.quiet_start}
        onChange={(quiet_start) => change({ quiet_start })}
        description="HH:MM local; both or neither."
      />
      <TextField label="Quiet until" placeholder="07:00" value={draft.quiet_end} onChange={(quiet_end) => change({ quiet_end })} />
      <Checkbox
        label="Only when there is something to report"
        checked={draft.only_when_something}
        onChange={(only_when_something) => change({ only_when_something })}
      />
      <Checkbox label="Catch up a missed run at start" checked={draft.catch_up} onChange={(catch_up) => change({ catch_up })} />
    </div>
  </div>
)

const HeartbeatRunsTable = ({ runs }: { readonly runs: ReadonlyArray<HeartbeatRun> }) => (
  <div {...scrollRegion}>
    <table className="data" aria-label="Heartbeat runs">
      <thead>
        <tr>
          <th>Slot</th>
          <th>Trigger</th>
          <th>Status</th>
          <th>Answer</th>
        </tr>
      </thead>
      <tbody>
        {runs.map((entry) => (
          <tr key={entry.id}>
            <td>
              <When at={entry.slot.toISOString()} />
            </td>
            <td>{entry.trigger}</td>
            <td>
              <StatusBadge state={runState[entry.status]} label={entry.status} />
            </td>
            <td className="plain">{entry.error ?? entry.result ?? ""}</td>
          </tr>
        ))}
      </tbody>
    </table>
  </div>
)

export const HeartbeatSection = ({ auth, channelId }: { readonly auth: AuthSession; readonly channelId: string }) => {
  const { heartbeat, draft, saved, save, change, submit } = useHeartbeatSettings(auth, channelId)
  const runs = useLoad(
    () => auth.call((client) => client.heartbeats.runs({ path: { id: channelId }, urlParams: { limit: 10 } })),
    [auth, channelId]
  )
  const runNow = useAction()
  const run = async () => {
    const started = await runNow.run(() => auth.call((client) => client.heartbeats.runNow({ path: { id: channelId } })))
    if (started) await runs.reload()
  }
  const stored = heartbeat.data
  return (
    <Section
      title="Heartbeat"
      actions={stored && allows(auth, ["heartbeats", "runNow"]) ?
        <button type="button" onClick={() => void run()} disabled={runNow.busy}>Run now</button> :
        null}
    >
      {heartbeat.error ? <p role="alert" className="error">{heartbeat.error}</p> : null}
      {runNow.error ? <p role="alert" className="error">{runNow.error}</p> : null}
      <p className="muted">
        {stored ? <>Next run: {stored.next_at ? <When at={stored.next_at.toISOString()} /> : "none (off or ended)"}</> : (
          "No heartbeat yet: give a prompt and a schedule to start one."
        )}
      </p>
      <EditForm
        label="Heartbeat settings"
        canWrite={allows(auth, ["heartbeats", "put"])}
        onSubmit={() => void submit()}
        submitLabel="Save heartbeat"
        busy={save.busy}
        error={save.error}
        saved={saved}
      >
        <HeartbeatFields draft={draft} change={change} />
      </EditForm>
      {runs.data?.length ? <HeartbeatRunsTable runs={runs.data} /> : null}
    </Section>
  )
}
