/**
 * The signed-in user's session in the browser: the access token lives in memory only, the refresh
 * token in the server's `HttpOnly` cookie (asked for with `Cairn-Refresh-Cookie: 1`), and the token
 * is refreshed silently before it expires. Every call goes through the typed client; a call refused
 * with 401 (a laptop that slept past the expiry) refreshes once and is tried again.
 *
 * Tabs share the cookie, and a refresh token is single use (presenting a spent one ends the whole
 * session), so refreshes are serialised across tabs with a Web Lock: each reads the cookie the one
 * before it left.
 */
import { FetchHttpClient, HttpApiClient, HttpClient, HttpClientRequest } from "@effect/platform"
import { Effect, Schema } from "effect"
import { CairnApi } from "../../Api.ts"
import { expandScopes, HeldScopes, type Scope } from "../../auth/Scopes.ts"
import { type CairnClient, makeStreamingClient, type StreamingClient } from "../../client.ts"
import { runCall } from "./calls.ts"

export const COOKIE_MODE_HEADER = "cairn-refresh-cookie"

export interface SignedInUser {
  readonly id: string
  readonly username: string
  readonly role: "admin" | "member"
}

interface TokenPairLike {
  readonly access_token: string
  readonly expires_in: number
  readonly user: SignedInUser
}

/** A typed client whose bearer is read at each request (the token changes as it is refreshed). */
export const clientWith = (bearer: () => string | undefined): Promise<CairnClient> =>
  Effect.runPromise(
    HttpApiClient.make(CairnApi, {
      baseUrl: window.location.origin,
      transformClient: HttpClient.mapRequest((request) => {
        const token = bearer()
        const withMode = HttpClientRequest.setHeader(request, COOKIE_MODE_HEADER, "1")
        return token === undefined ? withMode : HttpClientRequest.bearerToken(withMode, token)
      })
    }).pipe(Effect.provide(FetchHttpClient.layer))
  )

/**
 * The scopes a user token carries, read from its payload (the server verifies it on every call;
 * the page only decides what to show), with the implied ones: a round trip to /auth/me saved.
 */
const scopesOf = (token: string): ReadonlySet<Scope> => {
  try {
    const payload = JSON.parse(atob(token.split(".")[1]!.replace(/-/g, "+").replace(/_/g, "/"))) as { scopes?: unknown }
    return expandScopes(Schema.decodeUnknownSync(HeldScopes)(payload.scopes))
  } catch {
    return new Set()
  }
}

const isUnauthorized = (error: unknown) => (error as { _tag?: string } | null)?._tag === "Unauthorized"

/** Refresh this long before expiry: a fifth of the token's life, at most a minute. */
const refreshLead = (lifeSeconds: number) => Math.min(60_000, lifeSeconds * 200)

export class AuthSession {
  private token: string | undefined
  private timer: ReturnType<typeof setTimeout> | undefined
  private listeners = new Set<() => void>()
  user: SignedInUser | undefined
  scopes: ReadonlySet<Scope> = new Set()
  /** How many silent refreshes this page made (the sign-in tests read it). */
  refreshes = 0
  private clientPromise: Promise<CairnClient> | undefined

  /** The typed client, carrying the current access token at each request (the composer uploads with it). */
  client() {
    this.clientPromise ??= clientWith(() => this.token)
    return this.clientPromise
  }

  subscribe(listener: () => void) {
    this.listeners.add(listener)
    return () => void this.listeners.delete(listener)
  }

  private changed() {
    for (const listener of this.listeners) listener()
  }

  get accessToken() {
    return this.token
  }

  /** Whether the user's scopes grant `scope` (`admin` grants everything). */
  can(scope: Scope) {
    return this.scopes.has("admin") || this.scopes.has(scope)
  }

  /** Adopts a token pair the server answered, then reads the scopes it grants. */
  async adopt(pair: TokenPairLike) {
    this.token = pair.access_token
    this.user = pair.user
    clearTimeout(this.timer)
    this.timer = setTimeout(
      () => void this.refresh().catch(() => undefined),
      Math.max(1_000, pair.expires_in * 1000 - refreshLead(pair.expires_in))
    )
    this.scopes = scopesOf(pair.access_token)
    this.changed()
  }

  /** A new access token from the refresh cookie; signs out (locally) when the cookie is refused. */
  async refresh(): Promise<boolean> {
    const attempt = async () => {
      const client = await this.client()
      try {
        const pair = await runCall(client.auth.refresh({ payload: {} }))
        this.refreshes++
        await this.adopt(pair)
        return true
      } catch (error) {
        if (isUnauthorized(error)) this.forget()
        return false
      }
    }
    return navigator.locks ? navigator.locks.request("cairn-refresh", attempt) : attempt()
  }

  /** Runs a typed call with the current token; a 401 refreshes once and tries again. */
  async call<A, E>(f: (client: CairnClient) => Effect.Effect<A, E>): Promise<A> {
    const client = await this.client()
    try {
      return await runCall(f(client))
    } catch (error) {
      if (!isUnauthorized(error) || this.token === undefined || !(await this.refresh())) throw error
      return runCall(f(client))
    }
  }

  /** The streaming reader with the current token (made per stream: the token may have changed). */
  streaming(): Promise<StreamingClient> {
    const token = this.token
    return Effect.runPromise(
      makeStreamingClient({ baseUrl: window.location.origin, ...(token ? { apiKey: token } : {}) }).pipe(
        Effect.provide(FetchHttpClient.layer)
      )
    )
  }

  /**
   * Ends this device's sign-in, or with `everywhere` every session of the user (the cookie is not
   * sent to /auth/logout, so by access token, which names its sign-in).
   */
  async logout(everywhere = true) {
    try {
      await this.call((client) => client.auth.logout({ payload: { everywhere } }))
    } finally {
      this.forget()
    }
  }

  private forget() {
    clearTimeout(this.timer)
    this.token = undefined
    this.user = undefined
    this.scopes = new Set()
    this.changed()
  }
}
