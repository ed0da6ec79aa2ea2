/**
 * The launcher: a round button in the host page's corner that opens the widget in a panel above it,
 * with a badge counting answers written while the panel was closed, and the host's greeting beside
 * it until the visitor opens the chat or dismisses it. On a phone's width the panel fills the
 * screen. Built with DOM calls and CSSOM styles only (no inline markup, no style element), so a host
 * page's strict Content-Security-Policy does not stop it.
 */
import { textOn } from "../widget/colors.ts"
import { greetingSeen, keepOpen, markGreetingSeen, wasOpen } from "./storage.ts"

export interface LauncherOptions {
  readonly bot: string
  readonly accent: string
  readonly theme: "light" | "dark"
  readonly greeting: string | null
  readonly iframe: HTMLIFrameElement
  /** The panel opened: the widget is told, to move focus to its message box. */
  readonly onOpen: () => void
}

export interface Launcher {
  readonly root: HTMLElement
  readonly open: (restoring?: boolean) => void
  readonly close: () => void
  /** An answer was written: counted while the panel is closed. */
  readonly answered: () => void
  readonly destroy: () => void
}

const phone = () => window.matchMedia("(max-width: 480px)").matches

const element = <K extends keyof HTMLElementTagNameMap>(
  tag: K,
  style: Partial<CSSStyleDeclaration>,
  attributes: Record<string, string> = {}
) => {
  const made = document.createElement(tag)
  Object.assign(made.style, style)
  for (const [name, value] of Object.entries(attributes)) made.setAttribute(name, value)
  return made
}

const chatIcon = () => {
  const svg = document.createElementNS("http://www.w3.org/2000/svg", "svg")
  svg.setAttribute("viewBox", "0 0 24 24")
  svg.setAttribute("width", "26")
  svg.setAttribute("height", "26")
  svg.setAttribute("aria-hidden", "true")
  svg.setAttribute("focusable", "false")
  const path = document.createElementNS("http://www.w3.org/2000/svg", "path")
  path.setAttribute("fill", "currentColor")
  path.setAttribute("d", "M4 4h16a2 2 0 0 1 2 2v10a2 2 0 0 1-2 2H9l-5 4v-4a2 2 0 0 1-2-2V6a2 2 0 0 1 2-2z")
  svg.appendChild(path)
  return svg
}

/** The greeting beside the launcher: its text opens the chat, × dismisses it. */
const teaserOf = (greeting: string, theme: "light" | "dark", onOpen: () => void, onDismiss: () => void) => {
  const dark = theme === "dark"
  const teaser = element("div", {
    display: "flex",
    alignItems: "flex-start",
    gap: "4px",
    maxWidth: "280px",
    padding: "10px 8px 10px 14px",
    borderRadius: "12px",
    background: dark ? "#1f2329" : "#ffffff",
    color: dark ? "#e8eaed" : "#1d1f23",
    boxShadow: "0 4px 18px rgba(0,0,0,.18)",
    font: "15px/1.4 system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif"
  }, { "data-cairn-greeting": "" })
  // Plain buttons, not `all: unset`: that would take the browser's focus ring away too.
  const plain = { background: "transparent", border: "0", margin: "0", color: "inherit", font: "inherit", cursor: "pointer" }
  const text = element("button", { ...plain, padding: "0", flex: "1", textAlign: "left", overflowWrap: "anywhere" }, { type: "button" })
  text.textContent = greeting
  text.addEventListener("click", onOpen)
  const dismiss = element("button", { ...plain, padding: "0 6px", fontSize: "18px", lineHeight: "1" }, {
    type: "button",
    "aria-label": "Dismiss greeting"
  })
  dismiss.textContent = "×"
  dismiss.addEventListener("click", onDismiss)
  teaser.append(text, dismiss)
  return teaser
}

export const mountLauncher = (options: LauncherOptions): Launcher => {
  const { bot, iframe } = options
  const onAccent = textOn(options.accent)
  const root = element("div", {
    position: "fixed",
    right: "20px",
    bottom: "20px",
    zIndex: "2147483000",
    display: "flex",
    flexDirection: "column",
    alignItems: "flex-end",
    gap: "12px"
  }, { "data-cairn-launcher": bot })
  const panelId = `cairn-widget-panel-${bot.replace(/[^A-Za-z0-9_-]/g, "_")}`
  const panel = element("div", { display: "none", overflow: "hidden", background: "transparent" }, { id: panelId })
  Object.assign(iframe.style, { width: "100%", height: "100%", maxWidth: "none", border: "0", display: "block" })
  panel.appendChild(iframe)

  const button = element("button", {
    position: "relative",
    width: "58px",
    height: "58px",
    borderRadius: "50%",
    border: "0",
    cursor: "pointer",
    background: options.accent,
    color: onAccent,
    display: "flex",
    alignItems: "center",
    justifyContent: "center",
    boxShadow: "0 4px 14px rgba(0,0,0,.25)"
  }, { type: "button", "aria-controls": panelId, "aria-expanded": "false", "data-cairn-open": "" })
  button.appendChild(chatIcon())
  const badge = element("span", {
    position: "absolute",
    top: "-4px",
    right: "-4px",
    minWidth: "20px",
    height: "20px",
    padding: "0 5px",
    boxSizing: "border-box",
    borderRadius: "10px",
    background: "#b3261e",
    color: "#ffffff",
    font: "bold 12px/20px system-ui, sans-serif",
    textAlign: "center",
    display: "none"
  }, { "aria-hidden": "true", "data-cairn-unread": "" })
  button.appendChild(badge)

  let isOpen = false
  let unread = 0
  let teaser: HTMLElement | null = null

  const render = () => {
    const count = unread + (teaser ? 1 : 0)
    badge.textContent = String(count)
    badge.style.display = count > 0 && !isOpen ? "block" : "none"
    button.setAttribute("aria-expanded", String(isOpen))
    button.setAttribute("aria-label", isOpen ? "Close chat" : count > 0 ? `Open chat, ${count} unread` : "Open chat")
    const full = isOpen && phone()
    Object.assign(
      panel.style,
      full
        ? { display: "block", position: "fixed", inset: "0", width: "100vw", height: "100dvh", borderRadius: "0", boxShadow: "none" }
        : {
          display: isOpen ? "block" : "none",
          position: "static",
          inset: "auto",
          width: "min(380px, calc(100vw - 40px))",
          height: "min(600px, calc(100vh - 120px))",
          borderRadius: "14px",
          boxShadow: "0 8px 30px rgba(0,0,0,.25)"
        }
    )
    // On a phone the open panel covers the launcher; the widget's own close button closes it.
    button.style.display = full ? "none" : "flex"
    if (teaser) teaser.style.display = isOpen ? "none" : "flex"
  }

  const dropTeaser = () => {
    teaser?.remove()
    teaser = null
    markGreetingSeen(bot)
  }
  /** `restoring`: reopened by a reload, where taking the visitor's focus would surprise them. */
  const open = (restoring = false) => {
    isOpen = true
    unread = 0
    dropTeaser()
    keepOpen(bot, true)
    render()
    if (restoring) return
    iframe.focus()
    options.onOpen()
  }
  const close = () => {
    const focusWasInside = document.activeElement === iframe
    isOpen = false
    keepOpen(bot, false)
    render()
    if (focusWasInside) button.focus()
  }
  button.addEventListener("click", () => (isOpen ? close() : open()))
  const onKey = (event: KeyboardEvent) => {
    if (event.key === "Escape" && isOpen) close()
  }
  document.addEventListener("keydown", onKey)
  window.addEventListener("resize", render)

  if (options.greeting && !greetingSeen(bot)) {
    teaser = teaserOf(options.greeting, options.theme, () => open(), () => {
      dropTeaser()
      render()
      button.focus()
    })
  }
  root.append(panel, ...(teaser ? [teaser] : []), button)
  document.body.appendChild(root)
  if (wasOpen(bot)) open(true)
  else render()

  return {
    root,
    open,
    close,
    answered: () => {
      if (isOpen) return
      unread += 1
      render()
    },
    destroy: () => {
      document.removeEventListener("keydown", onKey)
      window.removeEventListener("resize", render)
      root.remove()
    }
  }
}
