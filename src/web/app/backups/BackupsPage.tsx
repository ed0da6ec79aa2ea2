/**
 * Backups: make one and follow it with a progress bar (the server reports tables dumped of all; the
 * archive is written after the last, so the bar counts that as one step more and fills when the
 * backup is complete), the history (status, size, schema version), and a complete one's archive
 * downloaded through the typed client.
 */
import { useCallback, useState } from "react"
import type { Backup } from "../../../operations/Model.ts"
import type { PageProps } from "../pages.ts"
import { allows } from "../scopes.ts"
import { Page, Section, StatusBadge, When } from "../ui/Page.tsx"
import { scrollRegion } from "../ui/scrollRegion.ts"
import { useAction, useLoad, usePoll } from "../ui/useLoad.ts"

const stateOf = (
  status: Backup["status"]
) => (status === "complete" ? "ok" : status === "failed" ? "bad" : status === "running" ? "warn" : "off")

const sizeOf = (bytes: number | null) => {
  if (bytes === null) return "—"
  const units = ["B", "KiB", "MiB", "GiB"]
  let value = bytes
  let unit = 0
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024
    unit++
  }
  return `${value.toFixed(unit === 0 ? 0 : 1)} ${units[unit]}`
}

/**
 * The share done, 0 to 100: tables dumped of all plus one step for writing the archive; undefined
 * while the tables are not counted yet (the bar is then indeterminate).
 */
export const percentOf = (backup: Backup): number | undefined => {
  if (backup.status !== "running") return 100
  if (backup.tables_total === 0) return undefined
  return Math.floor((100 * backup.tables_done) / (backup.tables_total + 1))
}

const phaseOf = (backup: Backup) => {
  if (backup.status === "complete") {
    return `Complete: ${backup.tables_total} tables, ${backup.rows_written.toLocaleString()} rows, ${backup.files_written} files, ${
      sizeOf(backup.size_bytes)
    }`
  }
  if (backup.status === "failed") return `Failed: ${backup.error ?? "no reason given"}`
  if (backup.tables_total === 0) return "Starting…"
  if (backup.tables_done < backup.tables_total) {
    return `Dumping tables: ${backup.tables_done} of ${backup.tables_total} (${backup.rows_written.toLocaleString()} rows)`
  }
  return `All ${backup.tables_total} tables dumped; copying files and writing the archive…`
}

const Progress = ({ backup }: { readonly backup: Backup }) => {
  const percent = percentOf(backup)
  return (
    <div className="stack" data-testid="backup-progress" data-status={backup.status}>
      <progress
        aria-label="Backup progress"
        max={100}
        value={percent}
        aria-valuetext={percent === undefined ? "starting" : `${percent}%`}
      />
      <p aria-live="polite" className={backup.status === "failed" ? "error" : "muted"}>{phaseOf(backup)}</p>
    </div>
  )
}

/** Saves bytes as a file the browser downloads. */
const saveAs = (bytes: Uint8Array, name: string) => {
  const url = URL.createObjectURL(new Blob([bytes as BlobPart], { type: "application/gzip" }))
  const link = document.createElement("a")
  link.href = url
  link.download = name
  document.body.append(link)
  link.click()
  link.remove()
  setTimeout(() => URL.revokeObjectURL(url), 60_000)
}

export default function BackupsPage({ auth }: PageProps) {
  const history = useLoad(() => auth.call((client) => client.operations.history({ urlParams: { limit: 50 } })), [auth])
  const [current, setCurrent] = useState<Backup | undefined>()
  const start = useAction()
  const download = useAction()
  const following = current?.status === "running"
  const reloadHistory = history.reload

  const follow = useCallback(async () => {
    if (!current) return
    const next = await auth.call((client) => client.operations.getBackup({ path: { id: current.id } })).catch(() => undefined)
    if (!next) return
    setCurrent(next)
    if (next.status !== "running") await reloadHistory()
  }, [auth, current, reloadHistory])
  usePoll(follow, 200, following)

  const make = async () => {
    const made = await start.run(() => auth.call((client) => client.operations.backup()))
    if (made) {
      setCurrent(made)
      await history.reload()
    }
  }
  const fetchArchive = (backup: Backup) =>
    download.run(async () => saveAs(await auth.call((client) => client.operations.download({ path: { id: backup.id } })), backup.file_name))

  const canDownload = allows(auth, ["operations", "download"])
  return (
    <Page
      title="Backups"
      error={history.error}
      loading={history.loading && !history.data}
      actions={allows(auth, ["operations", "backup"])
        ? <button type="button" className="primary" disabled={start.busy || following} onClick={() => void make()}>Back up now</button>
        : null}
    >
      {start.error ? <p role="alert" className="error">{start.error}</p> : null}
      {current ?
        (
          <Section title="This backup">
            <Progress backup={current} />
          </Section>
        ) :
        null}
      <Section title="History">
        <p className="muted">
          Each archive holds the database and the data directory (with the server's secret); restore one with{" "}
          <code>cairn restore &lt;archive&gt;</code>.
        </p>
        {download.error ? <p role="alert" className="error">{download.error}</p> : null}
        <div {...scrollRegion}>
          <table className="data" aria-label="Backup history">
            <thead>
              <tr>
                <th>Started</th>
                <th>Status</th>
                <th>Trigger</th>
                <th className="num">Size</th>
                <th className="num">Tables</th>
                <th className="num">Rows</th>
                <th className="num">Schema</th>
                <th>Archive</th>
              </tr>
            </thead>
            <tbody>
              {(history.data ?? []).map((backup) => (
                <tr key={backup.id} data-backup-id={backup.id}>
                  <td>
                    <When at={backup.started_at.toISOString()} />
                  </td>
                  <td>
                    <StatusBadge state={stateOf(backup.status)} label={backup.status} />
                    {backup.error ? <div className="error small-text">{backup.error}</div> : null}
                  </td>
                  <td>{backup.trigger}</td>
                  <td className="num">{sizeOf(backup.size_bytes)}</td>
                  <td className="num">{backup.tables_done}/{backup.tables_total}</td>
                  <td className="num">{backup.rows_written.toLocaleString()}</td>
                  <td className="num">{backup.schema_version ?? "—"}</td>
                  <td>
                    {backup.status === "complete" && backup.download_url && canDownload ?
                      (
                        <button
                          type="button"
                          className="small"
                          disabled={download.busy}
                          onClick={() => void fetchArchive(backup)}
                          aria-label={`Download ${backup.file_name}`}
                        >
                          Download
                        </button>
                      ) :
                      <span className="muted mono">{backup.file_name}</span>}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          {history.data && history.data.length === 0 ? <p className="muted">No backups yet.</p> : null}
        </div>
      </Section>
    </Page>
  )
}
