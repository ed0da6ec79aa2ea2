/**
 * The widget's conversation: the lines shown, the answer streamed into the last one, Stop, and the
 * visitor's earlier lines fetched again once the first token arrives (so a host page reload shows
 * where the visitor left off; the server kept the session, keyed by the visitor's client id).
 */
import { FetchHttpClient } from "@effect/platform"
import { Effect, Either, Stream } from "effect"
import { useEffect, useRef, useState } from "react"
import type { AgentEvent } from "../../agent/Events.ts"
import { grants } from "../../auth/Scopes.ts"
import { type CairnClient, makeStreamingClient } from "../../client.ts"
import { describeError, runCall } from "../shared/calls.ts"
import type { ComposedMessage } from "../shared/composer/Composer.tsx"
import type { WidgetToken } from "./token.ts"

export interface Line {
  readonly key: number
  readonly role: "user" | "assistant"
  readonly text: string
  readonly images: number
  readonly state: "streaming" | "done" | "failed"
  readonly note?: string
}

let nextKey = 0

/** What each streamed event does to the answer's line. */
const change = (event: AgentEvent): ((line: Line) => Partial<Line>) | null => {
  switch (event.type) {
    case "assistant_text":
      return () => ({ text: event.text })
    case "response":
      return (line) => ({ text: event.text || line.text, state: "done", note: undefined })
    case "queued":
      return () => ({ note: "Waiting for the previous answer…" })
    case "rate_limit_wait":
      return () => ({ note: "Busy, retrying shortly…" })
    case "error":
      return () => ({ note: event.message })
    case "cancelled":
      return () => ({ state: "done", note: "Stopped" })
    default:
      return null
  }
}

export const useConversation = (input: {
  readonly bot: string
  readonly clientId: string
  readonly client: CairnClient
  readonly token: WidgetToken
  /** An answer finished (the launcher counts it while its panel is closed). */
  readonly onAnswered: () => void
}) => {
  const { bot, clientId, client, token } = input
  const [lines, setLines] = useState<ReadonlyArray<Line>>([])
  const [busy, setBusy] = useState(false)
  const loaded = useRef(false)
  const baseUrl = window.location.origin
  const canChat = token.claims !== null && grants(token.claims.scopes, "chat")

  // The visitor's earlier lines, once, with the first token that may read them.
  useEffect(() => {
    if (!canChat || loaded.current) return
    loaded.current = true
    runCall(client.widget.conversation({ urlParams: { bot_id: bot, client_id: clientId } }))
      .then((conversation) => {
        const earlier = conversation.lines.map((line): Line => ({
          key: nextKey++,
          role: line.role,
          text: line.text,
          images: line.attachments,
          state: "done"
        }))
        setLines((current) => [...earlier, ...current])
      })
      // Nothing to show again is no reason to stop the visitor chatting.
      .catch(() => undefined)
  }, [canChat, client, bot, clientId])

  const update = (key: number, next: (line: Line) => Partial<Line>) =>
    setLines((current) => current.map((line) => (line.key === key ? { ...line, ...next(line) } : line)))

  /** One streamed answer with the token of the moment; the stream keeps its connection through renewals. */
  const stream = (key: number, message: ComposedMessage) =>
    Effect.runPromise(
      makeStreamingClient({ baseUrl, apiKey: token.current() }).pipe(
        Effect.flatMap((streaming) =>
          Stream.runForEach(
            streaming.chat({
              message: message.text,
              bot_id: bot,
              client_id: clientId,
              attachments: message.attachments,
              passive: false,
              ...(message.model ? { model_override: message.model } : {})
            }),
            ({ event }) =>
              Effect.sync(() => {
                const next = change(event)
                if (next) update(key, next)
              })
          )
        ),
        Effect.provide(FetchHttpClient.layer),
        Effect.either
      )
    )

  const send = async (message: ComposedMessage) => {
    const key = nextKey++
    setLines((current) => [
      ...current,
      { key: nextKey++, role: "user", text: message.text, images: message.attachments.length, state: "done" },
      { key, role: "assistant", text: "", images: 0, state: "streaming" }
    ])
    setBusy(true)
    try {
      let result = await stream(key, message)
      // An expired token: ask the page for a fresh one and try once more.
      if (Either.isLeft(result) && result.left._tag === "StreamRefused" && result.left.status === 401) {
        await token.request("expired")
        result = await stream(key, message)
      }
      if (Either.isLeft(result)) update(key, () => ({ state: "failed", note: describeError(result.left) }))
      else update(key, (line) => (line.state === "streaming" ? { state: "done" } : {}))
      if (Either.isRight(result)) input.onAnswered()
    } catch (error) {
      update(key, () => ({ state: "failed", note: describeError(error) }))
    } finally {
      setBusy(false)
    }
  }

  /** Stops the answer being written (the run ends with `cancelled`, which closes the stream). */
  const stop = () =>
    runCall(client.chat.cancel({ payload: { client_id: clientId, bot_id: bot } })).catch((error: unknown) =>
      setLines((current) => current.map((line, i) => (i === current.length - 1 ? { ...line, note: describeError(error) } : line)))
    )

  return { lines, busy, send, stop } as const
}
