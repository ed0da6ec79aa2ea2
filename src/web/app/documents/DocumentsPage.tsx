/**
 * Documents: the store the bots search. Listed newest first (by integration), added from a text file
 * or typed text, deleted, and searched as the bots search it, each hit with its fused score and its
 * cosine similarity.
 */
import { DateTime } from "effect"
import { useState } from "react"
import type { PageProps } from "../pages.ts"
import { allows } from "../scopes.ts"
import { ConfirmDialog, Dialog } from "../ui/Dialog.tsx"
import { TextArea, TextField } from "../ui/Field.tsx"
import { Page, Section, When } from "../ui/Page.tsx"
import { scrollRegion } from "../ui/scrollRegion.ts"
import { useAction, useConfirm, useLoad } from "../ui/useLoad.ts"

const PAGE = 50

interface Draft {
  readonly title: string
  readonly content: string
  readonly integrationId: string
}

const emptyDraft: Draft = { title: "", content: "", integrationId: "console" }

const UploadDialog = (
  { open, onClose, onSaved, auth }:
    & { readonly open: boolean; readonly onClose: () => void; readonly onSaved: () => void }
    & Pick<PageProps, "auth">
) => {
  const [draft, setDraft] = useState<Draft>(emptyDraft)
  const action = useAction()
  const readFile = async (file: File | undefined) => {
    if (!file) return
    const content = await file.text()
    setDraft((d) => ({ ...d, content, title: d.title || file.name.replace(/\.[^.]+$/, "") }))
  }
  const save = async () => {
    const made = await action.run(() =>
      auth.call((client) =>
        client.documents.create({ payload: { title: draft.title, content: draft.content, integration_id: draft.integrationId } })
      )
    )
    if (made) {
      setDraft(emptyDraft)
      onSaved()
    }
  }
  return (
    <Dialog
      title="Add a document"
      open={open}
      onClose={onClose}
      onSubmit={() => void save()}
      submitLabel="Add document"
      busy={action.busy}
      error={action.error}
      wide
    >
      <label className="field">
        <span>Text file</span>
        <input
          type="file"
          accept="text/*,.md,.txt,.csv,.json,.yaml,.yml,.html"
          onChange={(event) => void readFile(event.target.files?.[0])}
        />
        <small>Its text fills the content below; or type or paste the content.</small>
      </label>
      <TextField label="Title" required value={draft.title} onChange={(title) => setDraft({ ...draft, title })} />
      <TextField
        label="Integration"
        required
        value={draft.integrationId}
        onChange={(integrationId) => setDraft({ ...draft, integrationId })}
        description="The collection it belongs to; searches may be limited to one."
      />
      <TextArea label="Content" required rows={10} value={draft.content} onChange={(content) => setDraft({ ...draft, content })} />
    </Dialog>
  )
}

const SearchSection = ({ auth, integrationId }: Pick<PageProps, "auth"> & { readonly integrationId: string }) => {
  const [query, setQuery] = useState("")
  const action = useAction()
  const [hits, setHits] = useState<
    ReadonlyArray<{ id: string; title: string; integration_id: string; score: number; similarity: number | null; snippet: string }>
  >()
  const search = async () => {
    const q = query.trim()
    if (!q) return
    const found = await action.run(() =>
      auth.call((client) => client.documents.search({ urlParams: { q, ...(integrationId ? { integration_id: integrationId } : {}) } }))
    )
    if (found) setHits(found)
  }
  return (
    <Section title="Search">
      <form
        className="row"
        role="search"
        aria-label="Search documents"
        onSubmit={(event) => {
          event.preventDefault()
          void search()
        }}
      >
        <div className="grow">
          <TextField label="Query" value={query} onChange={setQuery} placeholder="What the bots would ask" />
        </div>
        <button type="submit" className="primary" disabled={action.busy || !query.trim()}>Search</button>
      </form>
      {action.error ? <p role="alert" className="error">{action.error}</p> : null}
      {hits ?
        (
          hits.length === 0 ? <p className="muted">Nothing found.</p> : (
            <ol className="hits" aria-label="Search results">
              {hits.map((hit) => (
                <li key={hit.id}>
                  <div className="row">
                    <strong>{hit.title}</strong>
                    <span className="chip">{hit.integration_id}</span>
                    <span className="spacer" />
                    <span className="mono" data-testid="hit-score" title="Reciprocal-rank fusion of the vector and full-text rankings">
                      score {hit.score.toFixed(4)}
                    </span>
                    <span className="mono muted" title="Cosine similarity of the best chunk">
                      {hit.similarity === null ? "text match" : `similarity ${hit.similarity.toFixed(3)}`}
                    </span>
                  </div>
                  <p className="muted snippet">{hit.snippet}</p>
                </li>
              ))}
            </ol>
          )
        ) :
        null}
    </Section>
  )
}

export default function DocumentsPage({ auth }: PageProps) {
  const [integration, setIntegration] = useState("")
  const [offset, setOffset] = useState(0)
  const [adding, setAdding] = useState(false)
  const filter = integration.trim()
  const list = useLoad(
    () =>
      auth.call((client) => client.documents.list({ urlParams: { limit: PAGE, offset, ...(filter ? { integration_id: filter } : {}) } })),
    [auth, filter, offset]
  )
  const canWrite = allows(auth, ["documents", "create"])
  const canDelete = allows(auth, ["documents", "remove"])
  const deleting = useConfirm(
    (doc: { id: string; title: string }) => auth.call((client) => client.documents.remove({ path: { id: doc.id } })),
    list.reload
  )
  return (
    <Page
      title="Documents"
      error={list.error}
      loading={list.loading && !list.data}
      actions={canWrite ? <button type="button" className="primary" onClick={() => setAdding(true)}>Add document</button> : null}
    >
      <div className="grid-4">
        <TextField
          label="Integration"
          value={integration}
          onChange={(value) => {
            setIntegration(value)
            setOffset(0)
          }}
          placeholder="every integration"
        />
      </div>
      {allows(auth, ["documents", "search"]) ? <SearchSection auth={auth} integrationId={filter} /> : null}
      <Section title="Stored">
        <div {...scrollRegion}>
          <table className="data" aria-label="Documents">
            <thead>
              <tr>
                <th>Title</th>
                <th>Integration</th>
                <th className="num">Characters</th>
                <th className="num">Chunks</th>
                <th>Added</th>
                <th>
                  <span className="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {(list.data?.items ?? []).map((doc) => (
                <tr key={doc.id}>
                  <td>{doc.title}</td>
                  <td>
                    <span className="chip">{doc.integration_id}</span>
                  </td>
                  <td className="num">{doc.content_chars.toLocaleString()}</td>
                  <td className="num">{doc.chunk_count}</td>
                  <td>
                    <When at={DateTime.formatIso(doc.created_at)} />
                  </td>
                  <td>
                    {canDelete
                      ? (
                        <button
                          type="button"
                          className="small stop"
                          aria-label={`Delete ${doc.title}`}
                          onClick={() => deleting.ask({ id: doc.id, title: doc.title })}
                        >
                          Delete
                        </button>
                      )
                      : null}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          {list.data && list.data.items.length === 0 ? <p className="muted">No documents yet.</p> : null}
        </div>
        <div className="row end">
          <button type="button" className="small" disabled={offset === 0} onClick={() => setOffset(Math.max(0, offset - PAGE))}>
            Newer
          </button>
          <button
            type="button"
            className="small"
            disabled={list.data?.next_offset == null}
            onClick={() => setOffset(list.data?.next_offset ?? offset)}
          >
            Older
          </button>
        </div>
      </Section>
      <UploadDialog
        auth={auth}
        open={adding}
        onClose={() => setAdding(false)}
        onSaved={() => {
          setAdding(false)
          void list.reload()
        }}
      />
      <ConfirmDialog
        {...deleting.dialog}
        title="Delete document"
        message={
          <>
            Delete <strong>{deleting.target?.title}</strong> with its chunks and embeddings? Searches no longer find it.
          </>
        }
        confirmLabel="Delete"
      />
    </Page>
  )
}
