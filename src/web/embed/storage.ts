/**
 * What the embed script keeps on the host page's own origin (its first-party storage, which the
 * browser keeps across reloads; the widget's iframe storage is partitioned and may be cleared):
 * the visitor id per bot, whether the greeting was seen, and whether the panel was open.
 */

const read = (storage: () => Storage, key: string): string | null => {
  try {
    return storage().getItem(key)
  } catch {
    // Storage refused (a privacy mode): the page goes on without it.
    return null
  }
}

const write = (storage: () => Storage, key: string, value: string | null) => {
  try {
    if (value === null) storage().removeItem(key)
    else storage().setItem(key, value)
  } catch {
    // As above: nothing kept, nothing broken.
  }
}

const local = () => window.localStorage
const session = () => window.sessionStorage

/** A random id of 32 hex digits (getRandomValues works on plain-HTTP pages too, unlike randomUUID). */
const randomId = () => Array.from(crypto.getRandomValues(new Uint8Array(16)), (byte) => byte.toString(16).padStart(2, "0")).join("")

/** The visitor's id for this bot on this site: made on the first visit, the same on every reload. */
export const visitorId = (bot: string): string => {
  const key = `cairn-widget:visitor:${bot}`
  const kept = read(local, key)
  if (kept && /^[A-Za-z0-9_-]{8,64}$/.test(kept)) return kept
  const made = randomId()
  write(local, key, made)
  return made
}

export const greetingSeen = (bot: string) => read(local, `cairn-widget:greeted:${bot}`) === "1"
export const markGreetingSeen = (bot: string) => write(local, `cairn-widget:greeted:${bot}`, "1")

/** The panel stays open through a reload within the tab's session. */
export const wasOpen = (bot: string) => read(session, `cairn-widget:open:${bot}`) === "1"
export const keepOpen = (bot: string, open: boolean) => write(session, `cairn-widget:open:${bot}`, open ? "1" : null)
