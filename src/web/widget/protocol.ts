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

export type HostMessage = TokenMessage | TokenErrorMessage

/** The spec's renewal: a 15-minute token re-minted every 12 minutes. */
export const renewEveryMs = 12 * 60 * 1000

/** The query parameter that tells the widget which origin embeds it. */
export const originParam = "origin"

const isObject = (data: unknown): data is Record<string, unknown> => typeof data === "object" && data !== null

export const isTokenRequest = (data: unknown): data is TokenRequest =>
  isObject(data) && data.type === tokenRequestType && typeof data.bot === "string"

export const isHostMessage = (data: unknown): data is HostMessage =>
  isObject(data) &&
  ((data.type === tokenType && typeof data.token === "string" && data.token.length > 0) ||
    (data.type === tokenErrorType && typeof data.detail === "string"))
