/**
 * A channel's workspace: its files, one open in an editor (save, delete), and new files. Binary
 * files (served base64) are listed but not edited as text.
 */
import { useState } from "react"
import type { AuthSession } from "../../shared/session.ts"
import { allows } from "../scopes.ts"
import { ConfirmDialog, Dialog } from "../ui/Dialog.tsx"
import { TextField } from "../ui/Field.tsx"
import { Section, When } from "../ui/Page.tsx"
import { useAction, useLoad } from "../ui/useLoad.ts"

interface OpenFile {
  readonly path: string
  readonly content: string
  readonly binary: boolean
  /** Not yet written: made by "New file". */
  readonly fresh: boolean
}

const sizeOf = (
  bytes: number
) => (bytes < 1024 ? `${bytes} B` : bytes < 1024 * 1024 ? `${(bytes / 1024).toFixed(1)} KiB` : `${(bytes / 1024 / 1024).toFixed(1)} MiB`)

export const WorkspaceSection = (
  { auth, channelId, enabled }: { readonly auth: AuthSession; readonly channelId: string; readonly enabled: boolean }
) => {
  const files = useLoad(
    () => (enabled ? auth.call((client) => client.workspaces.list({ path: { id: channelId } })) : Promise.resolve(undefined)),
    [auth, channelId, enabled]
  )
  const [open, setOpen] = useState<OpenFile | undefined>()
  const [naming, setNaming] = useState(false)
  const [newPath, setNewPath] = useState("")
  const [deleting, setDeleting] = useState(false)
  const [saved, setSaved] = useState(false)
  const load = useAction()
  const save = useAction()
  const remove = useAction()
  const canWrite = allows(auth, ["workspaces", "writeFile"])

  if (!enabled) {
    return (
      <Section title="Workspace">
        <p className="muted">The workspace is off for this channel; turn it on in the settings above.</p>
      </Section>
    )
  }

  const openFile = async (path: string) => {
    setSaved(false)
    save.setError(undefined)
    const file = await load.run(() => auth.call((client) => client.workspaces.readFile({ path: { id: channelId }, urlParams: { path } })))
    if (file) {
      setOpen({ path: file.path, content: file.encoding === "utf8" ? file.content : "", binary: file.encoding !== "utf8", fresh: false })
    }
  }
  const write = async () => {
    if (!open) return
    const done = await save.run(() =>
      auth.call((client) =>
        client.workspaces.writeFile({
          path: { id: channelId },
          urlParams: { path: open.path },
          payload: { content: open.content, encoding: "utf8" }
        })
      )
    )
    if (done) {
      setSaved(true)
      setOpen({ ...open, fresh: false })
      await files.reload()
    }
  }
  const confirmDelete = async () => {
    if (!open) return
    const done = await remove.run(() =>
      auth.call((client) => client.workspaces.deleteFile({ path: { id: channelId }, urlParams: { path: open.path } })).then(() => true)
    )
    if (done) {
      setDeleting(false)
      setOpen(undefined)
      await files.reload()
    }
  }
  const startNew = () => {
    const path = newPath.trim().replace(/^\/+/, "")
    if (!path) return
    setNaming(false)
    setNewPath("")
    setSaved(false)
    setOpen({ path, content: "", binary: false, fresh: true })
  }

  return (
    <Section title="Workspace" actions={canWrite ? <button type="button" onClick={() => setNaming(true)}>New file</button> : null}>
      {files.error ? <p role="alert" className="error">{files.error}</p> : null}
      {load.error ? <p role="alert" className="error">{load.error}</p> : null}
      <div className="workspace">
        <nav aria-label="Workspace files">
          <ul className="files">
            {(files.data?.files ?? []).map((file) => (
              <li key={file.path}>
                <button
                  type="button"
                  aria-current={open?.path === file.path}
                  onClick={() => void openFile(file.path)}
                  title={`${sizeOf(file.size)}, changed ${file.modified_at.toLocaleString()}`}
                >
                  <span className="mono">{file.path}</span>
                </button>
              </li>
            ))}
          </ul>
          {files.data?.files.length === 0 ? <p className="muted">No files yet.</p> : null}
          {files.data?.truncated ? <p className="muted">More files than listed.</p> : null}
        </nav>
        {open ?
          (
            <form
              className="stack"
              aria-label={`File ${open.path}`}
              onSubmit={(event) => {
                event.preventDefault()
                void write()
              }}
            >
              <div className="row">
                <strong className="mono">{open.path}</strong>
                {open.fresh ? <span className="chip">new</span> : null}
                <span className="spacer" />
                {!open.fresh && files.data
                  ? <When at={files.data.files.find((file) => file.path === open.path)?.modified_at.toISOString()} />
                  : null}
              </div>
              {open.binary ? <p className="muted">A binary file: it cannot be edited here.</p> : (
                <label className="field">
                  <span className="visually-hidden">Content of {open.path}</span>
                  <textarea
                    className="mono"
                    value={open.content}
                    readOnly={!canWrite}
                    spellCheck={false}
                    onChange={(event) => {
                      setSaved(false)
                      setOpen({ ...open, content: event.target.value })
                    }}
                  />
                </label>
              )}
              {save.error ? <p role="alert" className="error">{save.error}</p> : null}
              {canWrite ?
                (
                  <div className="row end">
                    {saved ? <span role="status" className="muted">Saved.</span> : null}
                    {!open.fresh
                      ? (
                        <button
                          type="button"
                          className="danger"
                          onClick={() => {
                            remove.setError(undefined)
                            setDeleting(true)
                          }}
                        >
                          Delete file
                        </button>
                      )
                      : null}
                    {!open.binary ? <button type="submit" className="primary" disabled={save.busy}>Save file</button> : null}
                  </div>
                ) :
                null}
            </form>
          ) :
          <p className="muted">Open a file to read or edit it.</p>}
      </div>
      <Dialog title="New file" open={naming} onClose={() => setNaming(false)} onSubmit={startNew} submitLabel="Create">
        <TextField
          label="Path"
          required
          value={newPath}
          onChange={setNewPath}
          placeholder="notes/today.md"
          description="Relative to the workspace; folders are made when it is saved."
        />
      </Dialog>
      <ConfirmDialog
        open={deleting}
        title="Delete file"
        message={
          <>
            Delete <span className="mono">{open?.path}</span> from the workspace?
          </>
        }
        confirmLabel="Delete"
        onConfirm={() => void confirmDelete()}
        onClose={() => setDeleting(false)}
        busy={remove.busy}
        error={remove.error}
      />
    </Section>
  )
}
