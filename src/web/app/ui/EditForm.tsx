/**
 * A settings form as the console's pages have it: its fields disabled for a user who may only
 * read, the save's refusal, a "Saved." note, and the Save button (only for a user who may write).
 */
import type { ReactNode } from "react"

export const EditForm = (props: {
  readonly label: string
  readonly canWrite: boolean
  readonly onSubmit: () => void
  readonly submitLabel: string
  readonly busy: boolean
  readonly error: string | undefined
  readonly saved: boolean
  /** Shown above the fields, outside the disabled fieldset. */
  readonly lead?: ReactNode
  readonly children: ReactNode
}) => (
  <form
    className="stack"
    aria-label={props.label}
    onSubmit={(event) => {
      event.preventDefault()
      props.onSubmit()
    }}
  >
    {props.lead}
    <fieldset className="bare" disabled={!props.canWrite}>
      {props.children}
    </fieldset>
    {props.error ? <p role="alert" className="error">{props.error}</p> : null}
    {props.canWrite ?
      (
        <div className="row end">
          {props.saved ? <span role="status" className="muted">Saved.</span> : null}
          <button type="submit" className="primary" disabled={props.busy}>{props.submitLabel}</button>
        </div>
      ) :
      null}
  </form>
)
