/** A page's frame: its heading, actions, and the refusal or loading state of its data. */
import type { ReactNode } from "react"

export const Page = (props: {
  readonly title: string
  readonly actions?: ReactNode
  readonly error?: string | undefined
  readonly loading?: boolean
  readonly children: ReactNode
  readonly testId?: string
}) => (
  <section className="page" aria-labelledby="page-title" aria-busy={props.loading || undefined} data-testid={props.testId}>
    <header className="page-head">
      <h1 id="page-title">{props.title}</h1>
      <span className="spacer" />
      {props.actions}
    </header>
    {props.error ? <p role="alert" className="error">{props.error}</p> : null}
    {props.children}
  </section>
)

/** A titled part of a page. */
export const Section = (
  { title, actions, children }: { readonly title: string; readonly actions?: ReactNode; readonly children: ReactNode }
) => (
  <section className="section" aria-label={title}>
    <header className="section-head">
      <h2>{title}</h2>
      <span className="spacer" />
      {actions}
    </header>
    {children}
  </section>
)

/** A status as a coloured dot and word: ready, partial, failed, and the like. */
export const StatusBadge = ({ state, label }: { readonly state: "ok" | "warn" | "bad" | "off"; readonly label: string }) => (
  <span className={`badge ${state}`} data-state={state}>
    <span className="dot" aria-hidden="true" />
    {label}
  </span>
)

/** A date-time from the server as the reader's local time. */
export const When = ({ at }: { readonly at: string | null | undefined }) =>
  at ? <time dateTime={at} title={at}>{new Date(at).toLocaleString()}</time> : <span className="muted">never</span>
