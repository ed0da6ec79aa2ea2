/** Client-side routing: the path in the address bar, changed without a page load. */
import { useEffect, useState } from "react"

export const navigate = (path: string) => {
  if (window.location.pathname !== path) window.history.pushState(null, "", path)
  window.dispatchEvent(new Event("cairn:navigate"))
}

export const usePath = () => {
  const [path, setPath] = useState(window.location.pathname)
  useEffect(() => {
    const update = () => setPath(window.location.pathname)
    window.addEventListener("popstate", update)
    window.addEventListener("cairn:navigate", update)
    return () => {
      window.removeEventListener("popstate", update)
      window.removeEventListener("cairn:navigate", update)
    }
  }, [])
  return path
}
