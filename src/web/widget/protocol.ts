/**
 * The `postMessage` handshake between the widget (in its iframe, on Cairn's origin) and the embed
 * script (`/widget.js`, on the host page), declared once for both and documented in docs/web.md.
 *
 * The widget asks its parent for a token (at start, and again when a call answers 401); the host
 * mints one through its backend and answers. The embed script also pushes a fresh token every
 * `renewEveryMs` without being asked. Each side checks the other's origin and window: the widget
 * takes messages only from the embedding origin it was given (`?origin=`), the script only from
 * the widget's iframe on Cairn's origin.
 */

export const tokenRequestType = "cairn-widget:token-request"
export const tokenType = "cairn-widget:token"
export const tokenErrorType = "cairn-widget:token-error"
export const openType = "cairn-widget:open"
export const answerType = "cairn-widget:answer"
export const closeType = "cairn-widget:close"

/** Widget → host: send a token. `reason` is `start` or `expired` (a call was refused with 401). */
export interface TokenRequest {
  readonly type: typeof tokenRequestType
  readonly bot: string
  readonly reason: "start" | "expired"
}

/** Host → widget: a token minted by `POST /api/v1/widget-auth/mint` (its `token` and `expires_at`). */
export interface TokenMessage {
  readonly type: typeof tokenType
  readonly token: string
  readonly expires_at?: string
}

/** Host → widget: minting failed; the widget shows `detail`. */
export interface TokenErrorMessage {
  readonly type: typeof tokenErrorType
  readonly detail: string
}

/** Host → widget: the visitor opened the launcher's panel; the widget moves focus to its message box. */
export interface OpenMessage {
  readonly type: typeof openType
}

export type HostMessage = TokenMessage | TokenErrorMessage | OpenMessage

/** Widget → host: an answer was written (the launcher counts it as unread while the panel is closed). */
export interface AnswerMessage {
  readonly type: typeof answerType
  readonly bot: string
}

/** Widget → host: the visitor closed the panel from inside (its close button, or Escape). */
export interface CloseMessage {
  readonly type: typeof closeType
  readonly bot: string
}

export type WidgetMessage = TokenRequest | AnswerMessage | CloseMessage

/** The spec's renewal: a 15-minute token re-minted every 12 minutes. */
export const renewEveryMs = 12 * 60 * 1000

/** The query parameter that tells the widget which origin embeds it (the server reads it too: src/http/WidgetRefusal.ts). */
export const originParam = "origin"

/**
 * The rest of what the embed tag tells the widget, in its URL: the visitor id the host page keeps
 * (the widget chats as `widget:<visitor>`, so a reload finds the same conversation), the host's
 * theme (`light` or `dark`; http/WidgetRefusal.ts reads it too) and accent colour (`rrggbb`), the greeting
 * shown first, and `launcher` when the widget sits in the launcher's panel (it then has a close button).
 */
export const visitorParam = "visitor"
export const themeParam = "theme"
export const accentParam = "accent"
export const greetingParam = "greeting"
export const modeParam = "mode"

/** A visitor id as the embed script makes one (a UUID) or a host passes its own: 8 to 64 of [A-Za-z0-9_-]. */
export const visitorShape = /^[A-Za-z0-9_-]{8,64}$/

/** The longest greeting carried in the URL. */
export const greetingMaxChars = 300

const isObject = (data: unknown): data is Record<string, unknown> => typeof data === "object" && data !== null

export const isTokenRequest = (data: unknown): data is TokenRequest =>
  isObject(data) && data.type === tokenRequestType && typeof data.bot === "string"

export const isHostMessage = (data: unknown): data is HostMessage =>
  isObject(data) &&
  ((data.type === tokenType && typeof data.token === "string" && data.token.length > 0) ||
    (data.type === tokenErrorType && typeof data.detail === "string") ||
    data.type === openType)

export const isWidgetMessage = (data: unknown): data is WidgetMessage =>
  isTokenRequest(data) || (isObject(data) && (data.type === answerType || data.type === closeType) && typeof data.bot === "string")
