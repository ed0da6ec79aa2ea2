/**
 * The widget's side of the token handshake (see protocol.ts): ask the embedding page for a token,
 * take answers only from that page's window and origin, and hold the newest token where every later
 * call reads it, so a renewal reaches the next call without touching a stream already open.
 */
import { Schema } from "effect"
import { useCallback, useEffect, useRef, useState } from "react"
import { expandScopes, HeldScopes, type Scope } from "../../auth/Scopes.ts"
import { isHostMessage, openType, originParam, type TokenRequest, tokenRequestType, tokenType } from "./protocol.ts"

/** What the widget reads from its token to decide what to show (the server still checks each call). */
export interface TokenClaims {
  readonly scopes: ReadonlySet<Scope>
  readonly botName: string | null
}

const decodeClaims = (token: string): TokenClaims => {
  try {
    const part = token.split(".")[1] ?? ""
    const json = atob(part.replace(/-/g, "+").replace(/_/g, "/").padEnd(Math.ceil(part.length / 4) * 4, "="))
    const claims = JSON.parse(json) as { scopes?: unknown; bot_name?: unknown }
    return {
      scopes: expandScopes(Schema.decodeUnknownSync(HeldScopes)(claims.scopes)),
      botName: typeof claims.bot_name === "string" ? claims.bot_name : null
    }
  } catch {
    return { scopes: new Set(), botName: null }
  }
}

/** The embedding origin the widget was given, when it is one. */
export const embedderOrigin = (): string | null => {
  const given = new URLSearchParams(window.location.search).get(originParam)
  if (!given) return null
  try {
    return new URL(given).origin === given ? given : null
  } catch {
    return null
  }
}

export interface WidgetToken {
  readonly claims: TokenClaims | null
  /** Why there is no usable token, when there is none. */
  readonly problem: string | null
  /** The newest token, read by every call as it starts. */
  readonly current: () => string
  /** Asks the host for a token (again) and answers the next one it sends. */
  readonly request: (reason: TokenRequest["reason"]) => Promise<string>
  /** How many tokens the host has pushed (the first one and every renewal). */
  readonly received: number
}

const answerWithinMs = 15_000

export const useWidgetToken = (bot: string): WidgetToken => {
  const embedder = embedderOrigin()
  const token = useRef("")
  const waiting = useRef<Array<{ resolve: (token: string) => void; reject: (error: Error) => void }>>([])
  const [claims, setClaims] = useState<TokenClaims | null>(null)
  const [problem, setProblem] = useState<string | null>(
    embedder === null || window.parent === window ? "This chat must be embedded in a page with Cairn's widget.js" : null
  )
  const [received, setReceived] = useState(0)

  const request = useCallback(
    (reason: TokenRequest["reason"]) =>
      new Promise<string>((resolve, reject) => {
        if (embedder === null) return reject(new Error("No embedding page"))
        const entry = { resolve, reject }
        waiting.current.push(entry)
        const message: TokenRequest = { type: tokenRequestType, bot, reason }
        window.parent.postMessage(message, embedder)
        setTimeout(() => {
          if (!waiting.current.includes(entry)) return
          waiting.current = waiting.current.filter((other) => other !== entry)
          reject(new Error("The page did not send a token"))
        }, answerWithinMs)
      }),
    [bot, embedder]
  )

  useEffect(() => {
    if (embedder === null) return
    const onMessage = (event: MessageEvent) => {
      // Only the page that embeds us, on the origin we were given.
      if (event.origin !== embedder || event.source !== window.parent || !isHostMessage(event.data)) return
      const data = event.data
      // Not about tokens: the widget's own listener takes it (useHostOpen).
      if (data.type === openType) return
      const pending = waiting.current
      waiting.current = []
      if (data.type === tokenType) {
        token.current = data.token
        setClaims(decodeClaims(data.token))
        setProblem(null)
        setReceived((n) => n + 1)
        pending.forEach((waiter) => waiter.resolve(data.token))
      } else {
        setProblem(data.detail)
        pending.forEach((waiter) => waiter.reject(new Error(data.detail)))
      }
    }
    window.addEventListener("message", onMessage)
    request("start").catch((error: Error) => setProblem((current) => current ?? error.message))
    return () => window.removeEventListener("message", onMessage)
  }, [embedder, request])

  return { claims, problem, current: () => token.current, request, received }
}

/** Calls `onOpen` (a stable function) when the embedding page says the launcher's panel opened (same checks as the tokens). */
export const useHostOpen = (onOpen: () => void) => {
  useEffect(() => {
    const embedder = embedderOrigin()
    if (embedder === null) return
    const onMessage = (event: MessageEvent) => {
      if (event.origin !== embedder || event.source !== window.parent || !isHostMessage(event.data)) return
      if (event.data.type === openType) onOpen()
    }
    window.addEventListener("message", onMessage)
    return () => window.removeEventListener("message", onMessage)
  }, [onOpen])
}
