/** A link inside the app: a real `<a href>` (open in a new tab works) that navigates without a page load. */
import type { ReactNode } from "react"
import { navigate } from "../route.ts"

export const AppLink = (
  { href, children, className }: { readonly href: string; readonly children: ReactNode; readonly className?: string }
) => (
  <a
    href={href}
    className={className}
    onClick={(event) => {
      if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return
      event.preventDefault()
      navigate(href)
    }}
  >
    {children}
  </a>
)
