/**
 * A modal dialog on the platform's `<dialog>` (focus trapped, Escape closes, the page behind inert),
 * used for forms and confirmations in place of `window.prompt`/`confirm`.
 */
import { type FormEvent, type ReactNode, useEffect, useRef } from "react"

interface DialogProps {
  readonly title: string
  readonly open: boolean
  readonly onClose: () => void
  readonly children: ReactNode
  /** Given: the body is a form; Enter submits, and the dialog stays open until `onClose`. */
  readonly onSubmit?: () => void
  readonly submitLabel?: string
  readonly busy?: boolean
  readonly error?: string | undefined
  readonly wide?: boolean
}

export const Dialog = ({ title, open, onClose, children, onSubmit, submitLabel = "Save", busy, error, wide }: DialogProps) => {
  const ref = useRef<HTMLDialogElement>(null)
  useEffect(() => {
    const dialog = ref.current
    if (!dialog) return
    if (open && !dialog.open) dialog.showModal()
    if (!open && dialog.open) dialog.close()
  }, [open])
  const submit = (event: FormEvent) => {
    event.preventDefault()
    onSubmit?.()
  }
  return (
    <dialog ref={ref} className={`dialog${wide ? " wide" : ""}`} aria-label={title} onClose={onClose} onCancel={onClose}>
      {open ?
        (
          <form method="dialog" className="stack" onSubmit={submit}>
            <h2>{title}</h2>
            {children}
            {error ? <p role="alert" className="error">{error}</p> : null}
            <div className="row end">
              <button type="button" onClick={onClose}>{onSubmit ? "Cancel" : "Close"}</button>
              {onSubmit ? <button type="submit" className="primary" disabled={busy}>{submitLabel}</button> : null}
            </div>
          </form>
        ) :
        null}
    </dialog>
  )
}

/** "Are you sure?" for a destructive action: the button, then a dialog naming what goes. */
export const ConfirmDialog = (props: {
  readonly open: boolean
  readonly title: string
  readonly message: ReactNode
  readonly confirmLabel: string
  readonly onConfirm: () => void
  readonly onClose: () => void
  readonly busy?: boolean
  readonly error?: string | undefined
}) => (
  <Dialog
    title={props.title}
    open={props.open}
    onClose={props.onClose}
    onSubmit={props.onConfirm}
    submitLabel={props.confirmLabel}
    busy={props.busy}
    error={props.error}
  >
    <p>{props.message}</p>
  </Dialog>
)
