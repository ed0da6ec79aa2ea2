/**
 * The embed script, served at `/widget.js` (built as one self-contained classic script): put
 *
 *   <script src="https://cairn.example/widget.js" data-bot="helper" data-token-url="/cairn-token" async></script>
 *
 * on a page and it mounts the bot's widget (an iframe of `/widget/<bot>`) where the tag stands. The
 * token comes from the host: `data-token-url` is a route of the host's own backend that mints one
 * with its key (`POST /api/v1/widget-auth/mint`) and answers its JSON; or `data-mint` names a global
 * function answering a Promise of `{token, expires_at}`. Pages that want more call
 * `CairnWidget.mount({ bot, mint, container, renewEveryMs })` themselves.
 *
 * The script answers the widget's token requests and pushes a fresh token every 12 minutes
 * (`data-renew-seconds` changes it); the widget swaps tokens without touching a stream in progress.
 */
import {
  type HostMessage,
  isTokenRequest,
  originParam,
  renewEveryMs as defaultRenewMs,
  tokenErrorType,
  tokenType
} from "../widget/protocol.ts"

export interface MintedToken {
  readonly token: string
  readonly expires_at?: string
}

export interface MountOptions {
  readonly bot: string
  /** The host's callback: mint a token through the host's backend. */
  readonly mint: () => Promise<MintedToken>
  /** Where the iframe goes; default: a new element after the script tag (or at the end of body). */
  readonly container?: Element
  /** How often a fresh token is pushed; default 12 minutes. */
  readonly renewEveryMs?: number
  /** The iframe's CSS height; default 560px. */
  readonly height?: string
  /** Cairn's origin; default: where this script was loaded from. */
  readonly cairnOrigin?: string
}

export interface MountedWidget {
  readonly iframe: HTMLIFrameElement
  /** Mints and pushes a token now. */
  readonly renew: () => Promise<void>
  readonly destroy: () => void
}

const script = document.currentScript instanceof HTMLScriptElement ? document.currentScript : null
const scriptOrigin = script ? new URL(script.src, document.baseURI).origin : window.location.origin

const detailOf = (error: unknown) => (error instanceof Error ? error.message : String(error))

export const mount = (options: MountOptions): MountedWidget => {
  const cairnOrigin = options.cairnOrigin ?? scriptOrigin
  const iframe = document.createElement("iframe")
  const src = new URL(`/widget/${encodeURIComponent(options.bot)}`, cairnOrigin)
  src.searchParams.set(originParam, window.location.origin)
  iframe.src = src.toString()
  iframe.title = "Chat"
  iframe.allow = "microphone; clipboard-write"
  iframe.setAttribute("data-cairn-widget", options.bot)
  iframe.style.border = "0"
  iframe.style.width = "100%"
  iframe.style.maxWidth = "440px"
  iframe.style.height = options.height ?? "560px"
  iframe.style.colorScheme = "normal"
  const container = options.container ?? document.body
  container.appendChild(iframe)

  const post = (message: HostMessage) => iframe.contentWindow?.postMessage(message, cairnOrigin)

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
    // Only the widget's own frame, on Cairn's origin, may ask.
    if (event.origin !== cairnOrigin || event.source !== iframe.contentWindow) return
    if (isTokenRequest(event.data)) void renew()
  }
  window.addEventListener("message", onMessage)
  const timer = window.setInterval(() => void renew(), options.renewEveryMs ?? defaultRenewMs)

  return {
    iframe,
    renew,
    destroy: () => {
      window.clearInterval(timer)
      window.removeEventListener("message", onMessage)
      iframe.remove()
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
  const { bot, tokenUrl, mint, renewSeconds, height } = tag.dataset
  if (!bot) return
  const minter = tokenUrl ? mintFromUrl(tokenUrl) : mint ? mintFromGlobal(mint) : null
  if (!minter) {
    console.error("Cairn widget: give data-token-url or data-mint on the script tag")
    return
  }
  const container = document.createElement("div")
  container.className = "cairn-widget"
  tag.after(container)
  const renewMs = renewSeconds ? Number(renewSeconds) * 1000 : undefined
  mount({
    bot,
    mint: minter,
    container,
    ...(renewMs && renewMs > 0 ? { renewEveryMs: renewMs } : {}),
    ...(height ? { height } : {})
  })
}
;(window as unknown as { CairnWidget: { mount: typeof mount } }).CairnWidget = { mount }
if (script) autoMount(script)
