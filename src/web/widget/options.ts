/**
 * What the embed tag told the widget, read from its URL (see protocol.ts): the visitor, the host's
 * theme and accent colour, the greeting, and whether it sits in the launcher's panel. The theme is
 * the host's, never the visitor's system setting: a widget in a light page stays light.
 */
import { normalAccent, textOn } from "./colors.ts"
import {
  accentParam,
  greetingMaxChars,
  greetingParam,
  modeParam,
  themeParam,
  visitorParam,
  visitorShape,
  type WidgetMessage
} from "./protocol.ts"
import { embedderOrigin } from "./token.ts"

export interface EmbedOptions {
  readonly visitor: string | null
  readonly theme: "light" | "dark"
  /** `#rrggbb`, or null for the widget's own blue. */
  readonly accent: string | null
  readonly greeting: string | null
  readonly launcher: boolean
}

export const readOptions = (search: string = window.location.search): EmbedOptions => {
  const query = new URLSearchParams(search)
  const visitor = query.get(visitorParam)
  const accent = normalAccent(query.get(accentParam))
  const greeting = query.get(greetingParam)?.trim().slice(0, greetingMaxChars)
  return {
    visitor: visitor !== null && visitorShape.test(visitor) ? visitor : null,
    theme: query.get(themeParam) === "dark" ? "dark" : "light",
    accent,
    greeting: greeting ? greeting : null,
    launcher: query.get(modeParam) === "launcher"
  }
}

/** The host's theme and accent on the widget's root, before it first paints. */
export const applyTheme = (options: EmbedOptions, root: HTMLElement = document.documentElement) => {
  root.dataset.theme = options.theme
  if (options.accent) {
    root.style.setProperty("--accent", options.accent)
    root.style.setProperty("--on-accent", textOn(options.accent))
  }
}

/** A message to the embedding page, on the origin it was given only. */
export const tellHost = (message: WidgetMessage) => {
  const embedder = embedderOrigin()
  if (embedder !== null && window.parent !== window) window.parent.postMessage(message, embedder)
}
