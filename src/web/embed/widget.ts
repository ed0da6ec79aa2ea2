/**
 * The embed script, served at `/widget.js` (built as one self-contained classic script): put
 *
 *   <script src="https://cairn.example/widget.js" data-bot="helper" data-token-url="/cairn-token" async></script>
 *
 * on a page and it adds the bot's widget (an iframe of `/widget/<bot>`) behind a launcher button in
 * the page's corner (`data-mode="inline"`: where the tag stands instead). The token comes from the
 * host: `data-token-url` is a route of the host's own backend that mints one with its key
 * (`POST /api/v1/widget-auth/mint`) and answers its JSON; or `data-mint` names a global function
 * answering a Promise of `{token, expires_at}`. `data-theme` (light or dark), `data-accent` (a
 * colour) and `data-greeting` dress it as the host's own. Pages that want more call
 * `CairnWidget.mount({ bot, mint, ... })` themselves.
 *
 * The script keeps a visitor id per bot on the host's origin (localStorage) and hands it to the
 * widget, so a reload of the host page brings back the visitor's conversation. It answers the
 * widget's token requests and pushes a fresh token every 12 minutes (`data-renew-seconds` changes
 * it); the widget swaps tokens without touching a stream in progress.
 */
import { defaultAccent, normalAccent } from "../widget/colors.ts"
import {
  accentParam,
  answerType,
  closeType,
  greetingMaxChars,
  greetingParam,
  type HostMessage,
  isWidgetMessage,
  modeParam,
  openType,
  originParam,
  renewEveryMs as defaultRenewMs,
  themeParam,
  tokenErrorType,
  tokenRequestType,
  tokenType,
  visitorParam
} from "../widget/protocol.ts"
import { type Launcher, mountLauncher } from "./launcher.ts"
import { visitorId } from "./storage.ts"

export interface MintedToken {
  readonly token: string
  readonly expires_at?: string
}

export interface MountOptions {
  readonly bot: string
  /** The host's callback: mint a token through the host's backend. */
  readonly mint: () => Promise<MintedToken>
  /** `launcher` (default without a container): a button in the corner opens it; `inline`: in the container. */
  readonly mode?: "launcher" | "inline"
  /** Where the inline iframe goes; default: the end of body. */
  readonly container?: Element
  /** How often a fresh token is pushed; default 12 minutes. */
  readonly renewEveryMs?: number
  /** The inline iframe's CSS height; default 560px. */
  readonly height?: string
  /** Cairn's origin; default: where this script was loaded from. */
  readonly cairnOrigin?: string
  /** The host's theme; default light. */
  readonly theme?: "light" | "dark"
  /** The host's accent colour (`#rgb` or `#rrggbb`). */
  readonly accent?: string
  /** Shown first in the conversation, and beside the launcher until the visitor opens it. */
  readonly greeting?: string
  /** The visitor's id (8 to 64 of A-Z a-z 0-9 _ -): a signed-in visitor's own, say; default one kept on this site per bot. */
  readonly visitor?: string
}

export interface MountedWidget {
  readonly iframe: HTMLIFrameElement
  /** Mints and pushes a token now. */
  readonly renew: () => Promise<void>
  /** Opens and closes the launcher's panel (nothing inline). */
  readonly open: () => void
  readonly close: () => void
  readonly destroy: () => void
}

const script = document.currentScript instanceof HTMLScriptElement ? document.currentScript : null
const scriptOrigin = script ? new URL(script.src, document.baseURI).origin : window.location.origin

const detailOf = (error: unknown) => (error instanceof Error ? error.message : String(error))

const widgetUrl = (options: MountOptions, cairnOrigin: string, launcher: boolean) => {
  const src = new URL(`/widget/${encodeURIComponent(options.bot)}`, cairnOrigin)
  src.searchParams.set(originParam, window.location.origin)
  src.searchParams.set(visitorParam, options.visitor ?? visitorId(options.bot))
  src.searchParams.set(themeParam, options.theme === "dark" ? "dark" : "light")
  const accent = normalAccent(options.accent)
  if (accent) src.searchParams.set(accentParam, accent.slice(1))
  const greeting = options.greeting?.trim().slice(0, greetingMaxChars)
  if (greeting) src.searchParams.set(greetingParam, greeting)
  if (launcher) src.searchParams.set(modeParam, "launcher")
  return src.toString()
}

const makeIframe = (options: MountOptions, src: string) => {
  const iframe = document.createElement("iframe")
  iframe.src = src
  iframe.title = "Chat"
  iframe.allow = "microphone; clipboard-write"
  iframe.setAttribute("data-cairn-widget", options.bot)
  iframe.style.border = "0"
  iframe.style.width = "100%"
  iframe.style.maxWidth = "440px"
  iframe.style.height = options.height ?? "560px"
  iframe.style.colorScheme = options.theme === "dark" ? "dark" : "light"
  return iframe
}

export const mount = (options: MountOptions): MountedWidget => {
  const cairnOrigin = options.cairnOrigin ?? scriptOrigin
  const launcherMode = (options.mode ?? (options.container ? "inline" : "launcher")) === "launcher"
  const iframe = makeIframe(options, widgetUrl(options, cairnOrigin, launcherMode))
  const post = (message: HostMessage) => iframe.contentWindow?.postMessage(message, cairnOrigin)
  let launcher: Launcher | null = null
  if (launcherMode) {
    launcher = mountLauncher({
      bot: options.bot,
      accent: normalAccent(options.accent) ?? defaultAccent,
      theme: options.theme === "dark" ? "dark" : "light",
      greeting: options.greeting?.trim().slice(0, greetingMaxChars) || null,
      iframe,
      onOpen: () => post({ type: openType })
    })
  } else {
    ;(options.container ?? document.body).appendChild(iframe)
  }

  // One mint at a time: a request arriving while one is in flight shares its answer.
  let inFlight: Promise<void> | null = null
  const renew = () => (inFlight ??= options
    .mint()
    .then((minted) => {
      if (typeof minted?.token !== "string" || minted.token.length === 0) throw new Error("The host's mint answered no token")
      post({ type: tokenType, token: minted.token, ...(minted.expires_at ? { expires_at: minted.expires_at } : {}) })
    })
    .catch((error: unknown) => post({ type: tokenErrorType, detail: `Could not get a token: ${detailOf(error)}` }))
    .finally(() => {
      inFlight = null
    }))

  const onMessage = (event: MessageEvent) => {
    // Only the widget's own frame, on Cairn's origin, may speak.
    if (event.origin !== cairnOrigin || event.source !== iframe.contentWindow || !isWidgetMessage(event.data)) return
    if (event.data.type === tokenRequestType) void renew()
    else if (event.data.type === answerType) launcher?.answered()
    else if (event.data.type === closeType) launcher?.close()
  }
  window.addEventListener("message", onMessage)
  const timer = window.setInterval(() => void renew(), options.renewEveryMs ?? defaultRenewMs)

  return {
    iframe,
    renew,
    open: () => launcher?.open(),
    close: () => launcher?.close(),
    destroy: () => {
      window.clearInterval(timer)
      window.removeEventListener("message", onMessage)
      if (launcher) launcher.destroy()
      else iframe.remove()
    }
  }
}

/** `data-token-url`: a POST to the host's own backend (same origin, with its cookies) answering JSON. */
const mintFromUrl = (url: string) => async (): Promise<MintedToken> => {
  const response = await fetch(url, { method: "POST", credentials: "same-origin", headers: { accept: "application/json" } })
  if (!response.ok) throw new Error(`${url} answered ${response.status}`)
  return (await response.json()) as MintedToken
}

/** `data-mint`: a global function of the host page. */
const mintFromGlobal = (name: string) => (): Promise<MintedToken> => {
  const callback = (window as unknown as Record<string, unknown>)[name]
  if (typeof callback !== "function") return Promise.reject(new Error(`window.${name} is not a function`))
  return Promise.resolve((callback as () => Promise<MintedToken>)())
}

const autoMount = (tag: HTMLScriptElement) => {
  const { bot, tokenUrl, mint, renewSeconds, height, mode, theme, accent, greeting, visitor } = tag.dataset
  if (!bot) return
  const minter = tokenUrl ? mintFromUrl(tokenUrl) : mint ? mintFromGlobal(mint) : null
  if (!minter) {
    console.error("Cairn widget: give data-token-url or data-mint on the script tag")
    return
  }
  const inline = mode === "inline"
  let container: Element | undefined
  if (inline) {
    container = document.createElement("div")
    container.className = "cairn-widget"
    tag.after(container)
  }
  const renewMs = renewSeconds ? Number(renewSeconds) * 1000 : undefined
  const start = () =>
    mount({
      bot,
      mint: minter,
      mode: inline ? "inline" : "launcher",
      ...(container ? { container } : {}),
      ...(renewMs && renewMs > 0 ? { renewEveryMs: renewMs } : {}),
      ...(height ? { height } : {}),
      ...(theme === "dark" || theme === "light" ? { theme } : {}),
      ...(accent ? { accent } : {}),
      ...(greeting ? { greeting } : {}),
      ...(visitor ? { visitor } : {})
    })
  // The launcher goes at the end of body, which a script in the head runs before.
  if (document.body) start()
  else document.addEventListener("DOMContentLoaded", start, { once: true })
}
;(window as unknown as { CairnWidget: { mount: typeof mount } }).CairnWidget = { mount }
if (script) autoMount(script)
