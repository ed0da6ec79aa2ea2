/**
 * The embeddable chat with one bot: the conversation (the answer streamed as it is written, in the
 * app's safe markdown) and the
 * shared Composer. It shows only what the widget token's scopes allow; a call the server refuses
 * shows the server's reason.
 */
import { FetchHttpClient } from "@effect/platform"
import { Effect, Either, Stream } from "effect"
import { useEffect, useRef, useState } from "react"
import type { AgentEvent } from "../../agent/Events.ts"
import { grants } from "../../auth/Scopes.ts"
import { makeStreamingClient } from "../../client.ts"
import { describeError, runCall } from "../shared/calls.ts"
import { type ComposedMessage, Composer } from "../shared/composer/Composer.tsx"
import { Markdown } from "../shared/Markdown.tsx"
import { liveClient } from "./client.ts"
import { useWidgetToken } from "./token.ts"

interface Line {
  readonly key: number
  readonly role: "user" | "assistant"
  readonly text: string
  readonly images: number
  readonly state: "streaming" | "done" | "failed"
  readonly note?: string
}

/** The widget's conversation key: one session per widget identity (the token's) and this client. */
const clientId = "widget"

let nextKey = 0

export const Widget = ({ bot }: { readonly bot: string }) => {
  const token = useWidgetToken(bot)
  const [lines, setLines] = useState<ReadonlyArray<Line>>([])
  const [busy, setBusy] = useState(false)
  const list = useRef<HTMLOListElement>(null)
  const baseUrl = window.location.origin
  // Made once for the widget's life: the token it reads is refreshed in place.
  const [client] = useState(() => liveClient(baseUrl, token.current, () => void token.request("expired").catch(() => undefined)))

  useEffect(() => {
    list.current?.lastElementChild?.scrollIntoView({ block: "end" })
  }, [lines])

  const update = (key: number, change: (line: Line) => Partial<Line>) =>
    setLines((current) => current.map((line) => (line.key === key ? { ...line, ...change(line) } : line)))

  const apply = (key: number, event: AgentEvent) => {
    switch (event.type) {
      case "assistant_text":
        return update(key, () => ({ text: event.text }))
      case "response":
        return update(key, (line) => ({ text: event.text || line.text, state: "done", note: undefined }))
      case "queued":
        return update(key, () => ({ note: "Waiting for the previous answer…" }))
      case "rate_limit_wait":
        return update(key, () => ({ note: "Busy, retrying shortly…" }))
      case "error":
        return update(key, () => ({ note: event.message }))
      case "cancelled":
        return update(key, () => ({ state: "done", note: "Stopped" }))
      default:
        return
    }
  }

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
            ({ event }) => Effect.sync(() => apply(key, event))
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

  const scopes = token.claims?.scopes
  const canChat = scopes !== undefined && grants(scopes, "chat")
  return (
    <main className="cairn-widget" data-testid="widget" data-tokens={token.received}>
      <header className="cairn-widget__header">
        <h1>{token.claims?.botName ?? "Chat"}</h1>
      </header>
      <ol className="cairn-widget__lines" ref={list} aria-live="polite" aria-label="Conversation">
        {lines.map((line) => (
          <li
            key={line.key}
            className={`cairn-widget__line cairn-widget__line--${line.role}`}
            data-role={line.role}
            data-state={line.state}
          >
            {line.text &&
              (line.role === "assistant" ?
                (
                  <div className="cairn-widget__text">
                    <Markdown text={line.text} />
                  </div>
                ) :
                <p className="cairn-widget__text">{line.text}</p>)}
            {line.images > 0 && <p className="cairn-widget__meta">{line.images === 1 ? "1 image" : `${line.images} images`}</p>}
            {line.state === "streaming" && !line.text && !line.note && <p className="cairn-widget__meta">…</p>}
            {line.note && (
              <p className="cairn-widget__note" role={line.state === "failed" ? "alert" : undefined}>
                {line.note}
              </p>
            )}
          </li>
        ))}
      </ol>
      {token.problem && (
        <p className="cairn-widget__problem" role="alert">
          {token.problem}
        </p>
      )}
      {token.claims === null ?
        (
          !token.problem && <p className="cairn-widget__meta cairn-widget__waiting">Connecting…</p>
        ) :
        canChat ?
        (
          <>
            {busy && (
              <div className="cairn-widget__stop">
                <button type="button" onClick={() => void stop()}>
                  Stop
                </button>
              </div>
            )}
            <Composer
              client={client}
              onSend={send}
              disabled={busy}
              allowAttachments={grants(token.claims.scopes, "attachments:write")}
              allowVoice
            />
          </>
        ) :
        (
          <p className="cairn-widget__problem" role="note" data-testid="no-chat">
            This chat is read-only: the widget's token does not allow sending messages (the chat scope).
          </p>
        )}
    </main>
  )
}
