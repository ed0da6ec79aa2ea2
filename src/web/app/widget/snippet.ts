/** The embed tag the console hands a site owner, built from the choices on the page (docs/web.md, "The one line"). */

export interface SnippetChoices {
  readonly bot: string
  readonly tokenUrl: string
  readonly greeting: string
  readonly theme: "light" | "dark"
  /** `#rrggbb`, or "" for the widget's own. */
  readonly accent: string
  readonly mode: "launcher" | "inline"
}

const attribute = (value: string) => value.replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;").replace(/>/g, "&gt;")

/** One `<script>` line for `cairnOrigin` (this server, as the browser reached it). */
export const embedSnippet = (cairnOrigin: string, choices: SnippetChoices): string => {
  const attributes: Array<readonly [string, string]> = [
    ["data-bot", choices.bot],
    ["data-token-url", choices.tokenUrl.trim() || "/cairn-token"],
    ["data-theme", choices.theme],
    ...(choices.accent ? [["data-accent", choices.accent] as const] : []),
    ...(choices.greeting.trim() ? [["data-greeting", choices.greeting.trim()] as const] : []),
    ...(choices.mode === "inline" ? [["data-mode", "inline"] as const] : [])
  ]
  const rendered = attributes.map(([name, value]) => `${name}="${attribute(value)}"`).join(" ")
  return `<script src="${attribute(cairnOrigin)}/widget.js" ${rendered} async></script>`
}
