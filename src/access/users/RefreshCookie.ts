/**
 * The web app's refresh token, kept where its script cannot read it: an `HttpOnly`,
 * `SameSite=Strict` cookie scoped to the refresh route. A request asks for it with the
 * `Cairn-Refresh-Cookie: 1` header (the app sends it on every sign-in and refresh); the refresh route
 * reads the cookie only from a request carrying that header too, which a cross-site form cannot send.
 *
 * OpenID sign-in is a browser navigation, so it cannot send a header: `/auth/oidc/start?app=1`
 * leaves a short-lived marker cookie that the provider's redirect back to the callback carries
 * (`SameSite=Lax`, as that redirect is a cross-site navigation), and the callback then sets the
 * refresh cookie and sends the browser to the app.
 */
import { HttpApp, type HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Duration, Effect } from "effect"
import { TokenPair } from "./Model.ts"
import { refreshTokenMs } from "./Users.ts"

export const REFRESH_COOKIE = "cairn_refresh"
export const REFRESH_COOKIE_PATH = "/auth/refresh"
export const COOKIE_MODE_HEADER = "cairn-refresh-cookie"
const OIDC_MARKER = "cairn_oidc_app"
const OIDC_MARKER_PATH = "/auth/oidc/callback"

/** Secure only where the browser reached us over https (directly or through a proxy that says so). */
const secureOf = (request: HttpServerRequest.HttpServerRequest) =>
  request.headers["x-forwarded-proto"] === "https" || request.url.startsWith("https:")

export const wantsCookie = (request: HttpServerRequest.HttpServerRequest) => request.headers[COOKIE_MODE_HEADER] === "1"

/** The refresh token from the cookie, only for a request in cookie mode. */
export const cookieToken = (request: HttpServerRequest.HttpServerRequest): string | undefined =>
  wantsCookie(request) ? request.cookies[REFRESH_COOKIE] || undefined : undefined

const onResponse = (change: (response: HttpServerResponse.HttpServerResponse) => HttpServerResponse.HttpServerResponse) =>
  HttpApp.appendPreResponseHandler((_request, response) => Effect.succeed(change(response)))

/** The refresh cookie with `value` for `maxAge` (zero: gone). */
const refreshCookie = (request: HttpServerRequest.HttpServerRequest, value: string, maxAge: Duration.Duration) =>
  onResponse((response) =>
    HttpServerResponse.unsafeSetCookie(response, REFRESH_COOKIE, value, {
      httpOnly: true,
      sameSite: "strict",
      path: REFRESH_COOKIE_PATH,
      secure: secureOf(request),
      maxAge
    })
  )

const setRefresh = (request: HttpServerRequest.HttpServerRequest, token: string) =>
  refreshCookie(request, token, Duration.millis(refreshTokenMs))

/** Drops the cookie (logout, or a refresh the server refused). */
export const clearRefreshCookie = (request: HttpServerRequest.HttpServerRequest) => refreshCookie(request, "", Duration.zero)

/** In cookie mode the refresh token goes into the cookie and out of the body; otherwise the pair as is. */
export const deliver = (request: HttpServerRequest.HttpServerRequest, pair: TokenPair, cookie = wantsCookie(request)) =>
  cookie && pair.refresh_token !== undefined
    ? Effect.as(setRefresh(request, pair.refresh_token), new TokenPair({ ...pair, refresh_token: undefined }))
    : Effect.succeed(pair)

export const markOidcForApp = (request: HttpServerRequest.HttpServerRequest) =>
  onResponse((response) =>
    HttpServerResponse.unsafeSetCookie(response, OIDC_MARKER, "1", {
      httpOnly: true,
      sameSite: "lax",
      path: OIDC_MARKER_PATH,
      secure: secureOf(request),
      maxAge: Duration.minutes(10)
    })
  )

/** Whether this OIDC callback completes a sign-in the web app started; the marker is spent. */
export const takeOidcMarker = (request: HttpServerRequest.HttpServerRequest) =>
  request.cookies[OIDC_MARKER] === "1"
    ? Effect.as(
      onResponse((response) =>
        HttpServerResponse.unsafeSetCookie(response, OIDC_MARKER, "", { httpOnly: true, path: OIDC_MARKER_PATH, maxAge: Duration.zero })
      ),
      true
    )
    : Effect.succeed(false)
