/**
 * A group of the navigation's links under a heading that folds it. A fresh console is calm: only the
 * group holding the open page is unfolded; what a person folds or unfolds is remembered on this
 * device (localStorage) and wins over that.
 */
import { type ReactNode, useState } from "react"

const storageKey = (id: string) => `cairn.nav.${id}`

const remembered = (id: string): boolean | undefined => {
  try {
    const value = window.localStorage.getItem(storageKey(id))
    return value === "open" ? true : value === "closed" ? false : undefined
  } catch {
    return undefined
  }
}

export const NavGroup = ({ id, title, icon, after, holdsCurrent, children, testId }: {
  readonly id: string
  readonly title: ReactNode
  readonly icon?: ReactNode
  /** Beside the heading's button (a status dot), not part of its name. */
  readonly after?: ReactNode
  readonly holdsCurrent: boolean
  readonly children: ReactNode
  readonly testId?: string
}) => {
  const [chosen, setChosen] = useState<boolean | undefined>(() => remembered(id))
  const open = chosen ?? holdsCurrent
  const toggle = () => {
    const next = !open
    setChosen(next)
    try {
      window.localStorage.setItem(storageKey(id), next ? "open" : "closed")
    } catch {
      // Private mode: the choice lasts for this page only.
    }
  }
  const bodyId = `nav-group-${id}`
  return (
    <div className="nav-group" data-testid={testId} data-open={open}>
      <h2 className="row">
        <button type="button" className="nav-group-toggle" aria-expanded={open} aria-controls={bodyId} onClick={toggle}>
          <span className="chevron" aria-hidden="true">{open ? "▾" : "▸"}</span>
          {icon}
          {title}
        </button>
        {after}
      </h2>
      <div id={bodyId} hidden={!open}>
        {children}
      </div>
    </div>
  )
}
