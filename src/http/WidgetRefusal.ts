/**
 * What `/widget/<bot>` answers a page whose origin may not embed the bot's widget. Framing the real
 * widget there would only show the browser's broken frame (its `frame-ancestors` refuses it), with
 * no word for the visitor or the site's owner; this page says why and what to do instead.
 *
 * It may be framed anywhere because there is nothing in it to misuse: static text, no script, no
 * form, no link, and it names only the origin the embedding page claimed for itself. The widget
 * proper still carries its `frame-ancestors`, so a page lying about its origin gains nothing.
 */

const escapeHtml = (text: string) =>
  text.replace(/[&<>"']/g, (char) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", "\"": "&quot;", "'": "&#39;" })[char]!)

/** Inline styles only (no script anywhere); the host's theme from the embed tag, light otherwise. */
const style = (dark: boolean) =>
  `:root{color-scheme:${dark ? "dark" : "light"};font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif}` +
  `body{margin:0;padding:1.2rem;background:${dark ? "#16181d" : "#ffffff"};color:${dark ? "#e8eaed" : "#1d1f23"}}` +
  `h1{font-size:1.05rem;margin:0 0 .6rem}p{margin:0 0 .6rem;line-height:1.45}` +
  `code{font-size:.9em;overflow-wrap:anywhere}`

export const refusedPage = (input: { readonly origin: string; readonly bot: string; readonly dark: boolean }) => {
  const origin = escapeHtml(input.origin)
  const bot = escapeHtml(input.bot)
  const css = style(input.dark)
  const body = `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8">
    <meta name="viewport" content="width=device-width, initial-scale=1">
    <title>Chat unavailable on this site</title>
    <style>${css}</style>
  </head>
  <body>
    <main data-testid="widget-refused">
      <h1>This chat is not available on this site</h1>
      <p>The site <code>${origin}</code> is not on the list of sites allowed to embed this chat.</p>
      <p>If you run this site: in Cairn's console, open <strong>Widget</strong>, choose the bot <code>${bot}</code> and add <code>${origin}</code> to its allowed sites. The chat shows on the next page load.</p>
    </main>
  </body>
</html>`
  return {
    body,
    headers: {
      "content-security-policy": `default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'; frame-ancestors *`,
      "x-content-type-options": "nosniff",
      "referrer-policy": "no-referrer",
      "cache-control": "no-store"
    }
  }
}

/**
 * The refusal for a widget page request, or null when the widget itself should answer: the page
 * names its origin (`?origin=`, as src/web/widget/protocol.ts calls it) and that origin is not
 * among those allowed. Without `?origin=` (opened directly) the widget answers, and says itself that
 * it must be embedded.
 */
export const refusalFor = (url: URL, bot: string, allowed: ReadonlyArray<string>) => {
  const claimed = url.searchParams.get("origin")
  if (claimed === null || allowed.includes(claimed)) return null
  return refusedPage({ origin: claimed.slice(0, 200), bot, dark: url.searchParams.get("theme") === "dark" })
}
