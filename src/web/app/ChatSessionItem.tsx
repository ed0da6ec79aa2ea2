/** One conversation in the chat's sidebar: its link (pinned ones marked), and pin, archive, rename, delete. */
import { Archive, ArchiveRestore, Pin, PinOff } from "lucide-react"

export interface SessionView {
  readonly id: string
  readonly title: string | null
  readonly bot_id: string
  readonly client_id: string
  readonly pinned: boolean
  readonly archived: boolean
}

export const SessionItem = ({ session, current, canWrite, onOpen, onChange, onRename, onDelete }: {
  readonly session: SessionView
  readonly current: boolean
  readonly canWrite: boolean
  readonly onOpen: () => void
  readonly onChange: (change: { readonly pinned?: boolean; readonly archived?: boolean }) => void
  readonly onRename: () => void
  readonly onDelete: () => void
}) => {
  const title = session.title ?? "Untitled"
  return (
    <li className={current ? "selected" : ""}>
      <a
        className="item"
        href={`/chat/${session.id}`}
        aria-current={current ? "page" : undefined}
        onClick={(event) => {
          event.preventDefault()
          onOpen()
        }}
      >
        {session.pinned ?
          (
            <>
              <Pin size={13} aria-hidden="true" className="pin-mark" />
              <span className="visually-hidden">Pinned:</span>
              {" "}
            </>
          ) :
          null}
        {title}
      </a>
      {canWrite ?
        (
          <span className="actions">
            <button
              type="button"
              className="icon"
              aria-label={`${session.pinned ? "Unpin" : "Pin"} ${title}`}
              onClick={() => onChange({ pinned: !session.pinned })}
            >
              {session.pinned ? <PinOff size={14} aria-hidden="true" /> : <Pin size={14} aria-hidden="true" />}
            </button>
            <button
              type="button"
              className="icon"
              aria-label={`${session.archived ? "Restore" : "Archive"} ${title}`}
              onClick={() => onChange({ archived: !session.archived })}
            >
              {session.archived ? <ArchiveRestore size={14} aria-hidden="true" /> : <Archive size={14} aria-hidden="true" />}
            </button>
            <button type="button" className="icon" aria-label={`Rename ${title}`} onClick={onRename}>✎</button>
            <button type="button" className="icon" aria-label={`Delete ${title}`} onClick={onDelete}>✕</button>
          </span>
        ) :
        null}
    </li>
  )
}
