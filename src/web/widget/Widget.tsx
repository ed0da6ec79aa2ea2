/**
 * The embeddable chat with one bot: the conversation (the answer streamed as it is written, in the
 * app's safe markdown; the visitor's earlier lines shown again after the host page reloads) and the
 * shared Composer. It shows only what the widget token's scopes allow; a call the server refuses
 * shows the server's reason. In the launcher's panel it has a close button, and Escape closes it.
 */
import { useEffect, useRef, useState } from "react"
import { grants } from "../../auth/Scopes.ts"
import { Composer } from "../shared/composer/Composer.tsx"
import { liveClient } from "./client.ts"
import { Lines } from "./Lines.tsx"
import { type EmbedOptions, tellHost } from "./options.ts"
import { answerType, closeType } from "./protocol.ts"
import { useHostOpen, useWidgetToken } from "./token.ts"
import { useConversation } from "./useConversation.ts"

/**
 * The widget's conversation key: the visitor's own (kept by the host page's embed script), else
 * one for the widget identity (the token's), as before visitor ids.
 */
const clientIdOf = (visitor: string | null) => (visitor ? `widget:${visitor}` : "widget")

const focusComposer = () => document.querySelector<HTMLTextAreaElement>("textarea[aria-label=\"Message\"]")?.focus()

/**
 * Focus back in the message box when an answer ends: the box is disabled while it is written, which
 * drops the focus to the page; only then (a visitor who moved elsewhere keeps their place).
 */
const useFocusBack = (busy: boolean) => {
  const wasBusy = useRef(false)
  useEffect(() => {
    if (wasBusy.current && !busy && (document.activeElement === null || document.activeElement === document.body)) focusComposer()
    wasBusy.current = busy
  }, [busy])
}

/** Escape anywhere in the widget closes the launcher's panel (the document's: focus may be on its body while an answer is written). */
const useEscapeCloses = (launcher: boolean, bot: string) =>
  useEffect(() => {
    if (!launcher) return
    const onKeyDown = (event: KeyboardEvent) => {
      if (event.key === "Escape" && !event.defaultPrevented) tellHost({ type: closeType, bot })
    }
    document.addEventListener("keydown", onKeyDown)
    return () => document.removeEventListener("keydown", onKeyDown)
  }, [launcher, bot])

export const Widget = ({ bot, options }: { readonly bot: string; readonly options: EmbedOptions }) => {
  const token = useWidgetToken(bot)
  // Made once for the widget's life: the token it reads is refreshed in place.
  const [client] = useState(() =>
    liveClient(window.location.origin, token.current, () => void token.request("expired").catch(() => undefined))
  )
  const conversation = useConversation({
    bot,
    clientId: clientIdOf(options.visitor),
    client,
    token,
    onAnswered: () => tellHost({ type: answerType, bot })
  })
  useHostOpen(focusComposer)
  useFocusBack(conversation.busy)
  const close = () => tellHost({ type: closeType, bot })
  useEscapeCloses(options.launcher, bot)

  const canChat = token.claims !== null && grants(token.claims.scopes, "chat")
  return (
    <main className="cairn-widget" data-testid="widget" data-tokens={token.received}>
      <header className="cairn-widget__header">
        <h1>{token.claims?.botName ?? "Chat"}</h1>
        {options.launcher && (
          <button type="button" className="cairn-widget__close" aria-label="Close chat" onClick={close}>
            <span aria-hidden="true">×</span>
          </button>
        )}
      </header>
      <Lines lines={conversation.lines} greeting={options.greeting} />
      {token.problem && (
        <p className="cairn-widget__problem" role="alert">
          {token.problem}
        </p>
      )}
      {token.claims === null ?
        !token.problem && <p className="cairn-widget__meta cairn-widget__waiting">Connecting…</p> :
        canChat ?
        (
          <>
            {conversation.busy && (
              <div className="cairn-widget__stop">
                <button type="button" onClick={() => void conversation.stop()}>
                  Stop
                </button>
              </div>
            )}
            <Composer
              client={client}
              onSend={conversation.send}
              disabled={conversation.busy}
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
