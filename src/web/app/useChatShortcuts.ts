/** The chat's keyboard shortcuts (listed in the `?` help). */
import { useEffect } from "react"

/** A key pressed while typing in a field is the field's, not a shortcut. */
const typing = (target: EventTarget | null) =>
  target instanceof HTMLElement && (target.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(target.tagName))

/** `setMenuOpen` and `setDialog` are state setters: stable, so only a new `newSession` binds the keys again. */
export const useChatShortcuts = (
  newSession: () => void,
  setMenuOpen: (open: boolean) => void,
  setDialog: (dialog: { readonly kind: "shortcuts" }) => void
) => {
  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      if ((event.ctrlKey || event.metaKey) && event.shiftKey && event.key.toLowerCase() === "o") {
        event.preventDefault()
        newSession()
      } else if ((event.ctrlKey || event.metaKey) && event.key.toLowerCase() === "k") {
        event.preventDefault()
        setMenuOpen(true)
        document.querySelector<HTMLInputElement>("[data-testid=chat-search]")?.focus()
      } else if (event.shiftKey && event.key === "Escape") {
        event.preventDefault()
        document.querySelector<HTMLTextAreaElement>("[data-testid=composer] textarea")?.focus()
      } else if (event.key === "?" && !typing(event.target) && !event.ctrlKey && !event.metaKey) {
        event.preventDefault()
        setDialog({ kind: "shortcuts" })
      }
    }
    window.addEventListener("keydown", onKey)
    return () => window.removeEventListener("keydown", onKey)
  }, [newSession, setMenuOpen, setDialog])
}
