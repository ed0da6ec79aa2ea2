/**
 * Dead letters: inbound items (a bridge message, a mail, an integration's webhook delivery, a
 * result delivery) that exhausted their attempts, with the counts per source (each one a filter),
 * the last error of each, one-click retry and a discard asked about first. The list refreshes
 * while the page is open.
 */
import { useState } from "react"
import type { InboundItem } from "../../../inbound/Model.ts"
import type { PageProps } from "../pages.ts"
import { allows } from "../scopes.ts"
import { ConfirmDialog } from "../ui/Dialog.tsx"
import { Page, When } from "../ui/Page.tsx"
import { scrollRegion } from "../ui/scrollRegion.ts"
import { useAction, useConfirm, useLoad, usePoll } from "../ui/useLoad.ts"

export default function DeadLettersPage({ auth }: PageProps) {
  const [source, setSource] = useState("")
  const letters = useLoad(
    () => auth.call((client) => client.deadLetters.list({ urlParams: { limit: 200, ...(source ? { source } : {}) } })),
    [auth, source]
  )
  usePoll(letters.reload, 5_000)
  const canAct = allows(auth, ["deadLetters", "retry"])
  const retrying = useAction()
  const [retried, setRetried] = useState<string | undefined>()
  const retry = async (item: InboundItem) => {
    const done = await retrying.run(() => auth.call((client) => client.deadLetters.retry({ path: { id: item.id } })))
    if (done) setRetried(`Retried ${item.source} item ${item.external_id}: now ${done.state}.`)
    await letters.reload()
  }
  const discarding = useConfirm(
    (item: InboundItem) => auth.call((client) => client.deadLetters.discard({ path: { id: item.id } })),
    letters.reload
  )
  const counts = Object.entries(letters.data?.counts ?? {}).sort(([a], [b]) => a.localeCompare(b))
  const items = letters.data?.items ?? []

  return (
    <Page title="Dead letters" error={letters.error} loading={letters.loading && !letters.data}>
      <section aria-label="Dead letters per source">
        {counts.length === 0 ?
          <p className="muted">No dead letters: every inbound item was delivered, settled or is still moving.</p> :
          (
            <ul className="row" aria-label="Sources">
              <li>
                <button type="button" className="small" aria-pressed={source === ""} onClick={() => setSource("")}>
                  All ({counts.reduce((sum, [, count]) => sum + count, 0)})
                </button>
              </li>
              {counts.map(([name, count]) => (
                <li key={name}>
                  <button type="button" className="small" aria-pressed={source === name} onClick={() => setSource(name)}>
                    {name} ({count})
                  </button>
                </li>
              ))}
            </ul>
          )}
      </section>
      {retrying.error ? <p role="alert" className="error">{retrying.error}</p> : null}
      {retried ? <p role="status">{retried}</p> : null}
      {discarding.error && !discarding.target ? <p role="alert" className="error">{discarding.error}</p> : null}
      <div {...scrollRegion}>
        <table className="data" aria-label="Dead letters">
          <thead>
            <tr>
              <th>Since</th>
              <th>Source</th>
              <th>Item</th>
              <th className="num">Attempts</th>
              <th>Last error</th>
              <th>
                <span className="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {items.map((item) => (
              <tr key={item.id} data-dead-letter-id={item.id}>
                <td>
                  <When at={item.updated_at.toISOString()} />
                </td>
                <td>{item.source}</td>
                <td className="clip" title={item.external_id}>{item.summary || item.external_id}</td>
                <td className="num">{item.attempts}</td>
                <td className="clip" title={item.last_error ?? item.reason ?? ""}>{item.last_error ?? item.reason ?? ""}</td>
                <td className="row">
                  {canAct ?
                    (
                      <>
                        <button
                          type="button"
                          className="small"
                          disabled={retrying.busy}
                          onClick={() => void retry(item)}
                          aria-label={`Retry ${item.source} item ${item.external_id}`}
                        >
                          Retry
                        </button>
                        <button
                          type="button"
                          className="small stop"
                          onClick={() => discarding.ask(item)}
                          aria-label={`Discard ${item.source} item ${item.external_id}`}
                        >
                          Discard
                        </button>
                      </>
                    ) :
                    null}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
        {letters.data && items.length === 0 && counts.length > 0 ? <p className="muted">No dead letters from {source}.</p> : null}
      </div>
      <ConfirmDialog
        {...discarding.dialog}
        title="Discard dead letter"
        message={
          <>
            The <strong>{discarding.target?.source}</strong> item <strong>{discarding.target?.external_id}</strong>{" "}
            is kept as discarded and never acted on again.
          </>
        }
        confirmLabel="Discard"
      />
    </Page>
  )
}
