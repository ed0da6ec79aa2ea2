/**
 * What the limit tests send: sign-ins from a chosen client address (the server trusts 127.0.0.1 as
 * a proxy, so `X-Forwarded-For` names the source), and chat streams whose status is all that is read.
 */
import * as crypto from "node:crypto"
import type { makeRequest } from "../support/server.ts"

export type Request = ReturnType<typeof makeRequest>

/** The environment that makes the test's own address a trusted proxy. */
export const trustLocalProxy = { TRUSTED_PROXIES: "127.0.0.1, ::1" }

export const signIn = (request: Request, from: string, username: string, password: string) =>
  request("/auth/login", {
    method: "POST",
    auth: null,
    headers: { "x-forwarded-for": from },
    body: JSON.stringify({ username, password })
  })

/** A message on `/chat/stream`: its status, its Retry-After and detail when refused; the stream itself is dropped (the run goes on). */
export const streamStatus = async (request: Request, key: string) => {
  const controller = new AbortController()
  const response = await request("/chat/stream", {
    method: "POST",
    auth: key,
    body: JSON.stringify({ message: "hello", client_id: `c-${crypto.randomUUID()}` }),
    signal: controller.signal
  })
  const detail = response.status === 200 ? undefined : ((await response.json()) as { detail: string }).detail
  const session = response.headers.get("x-session-id")
  controller.abort()
  return { status: response.status, retryAfter: response.headers.get("retry-after"), detail, session }
}

/** How many of `statuses` are `status`. */
export const count = (statuses: ReadonlyArray<number>, status: number) => statuses.filter((s) => s === status).length
