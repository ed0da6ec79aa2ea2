/** Client-side routing: the path (and query) in the address bar, changed without a page load. */
import { useEffect, useState } from "react"

/** Goes to `href`; `replace` when the step should not stay in the history (a redirect, as the chat's landing). */
export const navigate = (href: string, options: { readonly replace?: boolean } = {}) => {
  if (window.location.pathname + window.location.search !== href) {
    if (options.replace) window.history.replaceState(null, "", href)
    else window.history.pushState(null, "", href)
  }
  window.dispatchEvent(new Event("cairn:navigate"))
}

const useAddress = <A>(read: () => A): A => {
  const [value, setValue] = useState(read)
  useEffect(() => {
    const update = () => setValue(read())
    window.addEventListener("popstate", update)
    window.addEventListener("cairn:navigate", update)
    return () => {
      window.removeEventListener("popstate", update)
      window.removeEventListener("cairn:navigate", update)
    }
  }, [read])
  return value
}

const readPath = () => window.location.pathname
const readSearch = () => window.location.search

/** The address bar's path. */
export const usePath = () => useAddress(readPath)

/** One parameter of the address bar's query (`?item=…`), or null. */
export const useQueryParam = (name: string) => new URLSearchParams(useAddress(readSearch)).get(name)
