/**
 * A channel's workspace: its files, one open in an editor (save, delete), and new files. Binary
 * files (served base64) are listed but not edited as text.
 */
import { useState } from "react"
import type { WorkspaceFileInfo, WorkspaceFileList } from "../../../workspaces/Model.ts"
import type { AuthSession } from "../../shared/session.ts"
import { allows } from "../scopes.ts"
import { ConfirmDialog, Dialog } from "../ui/Dialog.tsx"
import { TextField } from "../ui/Field.tsx"
import { Section, When } from "../ui/Page.tsx"
import { useAction, useConfirm, useLoad } from "../ui/useLoad.ts"

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

/**
 * The file open in the editor and what is done to it: opening a listed one, editing, saving (then
 * `afterWrite` runs, a reload of the listing) and starting a new one.
 */
const useOpenFile = (auth: AuthSession, channelId: string, afterWrite: () => Promise<void>) => {
  const [open, setOpen] = useState<OpenFile | undefined>()
  const [saved, setSaved] = useState(false)
  const load = useAction()
  const save = useAction()
  const openFile = async (path: string) => {
    setSaved(false)
    save.setError(undefined)
    const file = await load.run(() => auth.call((client) => client.workspaces.readFile({ path: { id: channelId }, urlParams: { path } })))
    if (file) {
      setOpen({ path: file.path, content: file.encoding === "utf8" ? file.content : "", binary: file.encoding !== "utf8", fresh: false })
    }
  }
  const edit = (content: string) => {
    setSaved(false)
    setOpen((current) => current && { ...current, content })
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
      await afterWrite()
    }
  }
  const startNew = (path: string) => {
    setSaved(false)
    setOpen({ path, content: "", binary: false, fresh: true })
  }
  const close = () => setOpen(undefined)
  return { open, saved, load, save, openFile, edit, write, startNew, close }
}

const WorkspaceFilesNav = ({ listing, openPath, onOpen }: {
  readonly listing: WorkspaceFileList | undefined
  readonly openPath: string | undefined
  readonly onOpen: (path: string) => void
}) => (
  <nav aria-label="Workspace files">
    <ul className="files">
      {(listing?.files ?? []).map((file) => (
        <li key={file.path}>
          <button
            type="button"
            aria-current={openPath === file.path}
            onClick={() => onOpen(file.path)}
            title={`${sizeOf(file.size)}, changed ${file.modified_at.toLocaleString()}`}
          >
            <span className="mono">{file.path}</span>
          </button>
        </li>
      ))}
    </ul>
    {listing?.files.length === 0 ? <p className="muted">No files yet.</p> : null}
    {listing?.truncated ? <p className="muted">More files than listed.</p> : null}
  </nav>
)

/** The open file as a form: its content in a text area (not for a binary file), saved or deleted. */
const FileEditor = ({ file, listed, canWrite, saved, saving, error, onEdit, onSave, onDelete }: {
  readonly file: OpenFile
  readonly listed: ReadonlyArray<WorkspaceFileInfo> | undefined
  readonly canWrite: boolean
  readonly saved: boolean
  readonly saving: boolean
  readonly error: string | undefined
  readonly onEdit: (content: string) => void
  readonly onSave: () => void
  readonly onDelete: () => void
}) => (
  <form
    className="stack"
    aria-label={`File ${file.path}`}
    onSubmit={(event) => {
      event.preventDefault()
      onSave()
    }}
  >
    <div className="row">
      <strong className="mono">{file.path}</strong>
      {file.fresh ? <span className="chip">new</span> : null}
      <span className="spacer" />
      {!file.fresh && listed ? <When at={listed.find((entry) => entry.path === file.path)?.modified_at.toISOString()} /> : null}
    </div>
    {file.binary ? <p className="muted">A binary file: it cannot be edited here.</p> : (
      <label className="field">
        <span className="visually-hidden">Content of {file.path}</span>
        <textarea
          className="mono"
          value={file.content}
          readOnly={!canWrite}
          spellCheck={false}
          onChange={(event) => onEdit(event.target.value)}
        />
      </label>
    )}
    {error ? <p role="alert" className="error">{error}</p> : null}
    {canWrite ?
      (
        <div className="row end">
          {saved ? <span role="status" className="muted">Saved.</span> : null}
          {!file.fresh
            ? (
              <button type="button" className="danger" onClick={onDelete}>
                Delete file
              </button>
            )
            : null}
          {!file.binary ? <button type="submit" className="primary" disabled={saving}>Save file</button> : null}
        </div>
      ) :
      null}
  </form>
)

/** Asks for a new file's path; the path typed stays until a file is made from it. */
const NewFileDialog = ({ open, onClose, onCreate }: {
  readonly open: boolean
  readonly onClose: () => void
  readonly onCreate: (path: string) => void
}) => {
  const [newPath, setNewPath] = useState("")
  const create = () => {
    const path = newPath.trim().replace(/^\/+/, "")
    if (!path) return
    setNewPath("")
    onCreate(path)
  }
  return (
    <Dialog title="New file" open={open} onClose={onClose} onSubmit={create} submitLabel="Create">
      <TextField
        label="Path"
        required
        value={newPath}
        onChange={setNewPath}
        placeholder="notes/today.md"
        description="Relative to the workspace; folders are made when it is saved."
      />
    </Dialog>
  )
}

export const WorkspaceSection = (
  { auth, channelId, enabled }: { readonly auth: AuthSession; readonly channelId: string; readonly enabled: boolean }
) => {
  const files = useLoad(
    () => (enabled ? auth.call((client) => client.workspaces.list({ path: { id: channelId } })) : Promise.resolve(undefined)),
    [auth, channelId, enabled]
  )
  const [naming, setNaming] = useState(false)
  const editor = useOpenFile(auth, channelId, files.reload)
  const deleting = useConfirm(
    (path: string) => auth.call((client) => client.workspaces.deleteFile({ path: { id: channelId }, urlParams: { path } })),
    async () => {
      editor.close()
      await files.reload()
    }
  )
  const canWrite = allows(auth, ["workspaces", "writeFile"])

  if (!enabled) {
    return (
      <Section title="Workspace">
        <p className="muted">The workspace is off for this channel; turn it on in the settings above.</p>
      </Section>
    )
  }

  const { open } = editor
  return (
    <Section title="Workspace" actions={canWrite ? <button type="button" onClick={() => setNaming(true)}>New file</button> : null}>
      {files.error ? <p role="alert" className="error">{files.error}</p> : null}
      {editor.load.error ? <p role="alert" className="error">{editor.load.error}</p> : null}
      <div className="workspace">
        <WorkspaceFilesNav listing={files.data} openPath={open?.path} onOpen={(path) => void editor.openFile(path)} />
        {open ?
          (
            <FileEditor
              file={open}
              listed={files.data?.files}
              canWrite={canWrite}
              saved={editor.saved}
              saving={editor.save.busy}
              error={editor.save.error}
              onEdit={editor.edit}
              onSave={() => void editor.write()}
              onDelete={() => deleting.ask(open.path)}
            />
          ) :
          <p className="muted">Open a file to read or edit it.</p>}
      </div>
      <NewFileDialog
        open={naming}
        onClose={() => setNaming(false)}
        onCreate={(path) => {
          setNaming(false)
          editor.startNew(path)
        }}
      />
      <ConfirmDialog
        {...deleting.dialog}
        title="Delete file"
        message={
          <>
            Delete <span className="mono">{deleting.target}</span> from the workspace?
          </>
        }
        confirmLabel="Delete"
      />
    </Section>
  )
}
