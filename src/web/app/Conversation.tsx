/**
 * One conversation: its stored messages, and the answer in progress as its events arrive. Opening
 * a conversation whose last run has not finished (a reload, a second tab, a lost network) rejoins
 * that run from its first event, and the stored part of it is hidden meanwhile, so the answer reads
 * the same as if the page had never gone: nothing missing, nothing twice. When the run ends the
 * stored messages are read again and take its place.
 *
 * The view follows the answer as it grows unless the reader scrolled up (then "Jump to latest"
 * brings them back), and the cursor stays in the message box while an answer is written.
 */
import { useCallback, useEffect, useRef, useState } from "react"
import type { CairnClient } from "../../client.ts"
import { describeError } from "../shared/calls.ts"
import { type ComposedMessage } from "../shared/composer/Composer.tsx"
import { followRun, type RunFollower, type RunStart } from "../shared/runStream.ts"
import { type AuthSession } from "../shared/session.ts"
import { applyEvent, emptyTurn, type Turn } from "../shared/turn.ts"
import { ComposerBar, LiveAnswer } from "./ConversationParts.tsx"
import { ConversationTools } from "./ConversationTools.tsx"
import { MessageList, type StoredMessage } from "./Messages.tsx"
import { takeHandoff, useChatBranches } from "./useChatBranches.ts"
import { useFollowScroll } from "./useFollowScroll.ts"
import { useSessionDocuments } from "./useSessionDocuments.ts"

export interface SessionRef {
  readonly id: string
  readonly bot_id: string
  readonly client_id: string
}

interface Live {
  readonly turn: Turn
  /** The message that started it, when it was sent from this page. */
  readonly userText?: string
  /** The stored run it rejoined; its stored messages are hidden while it runs. */
  readonly runId?: string
  readonly reconnecting?: boolean
  /** A failed answer's message, sent here, that Retry sends again. */
  readonly retryText?: string
}

const runIdOf = (message: StoredMessage) => {
  const id = (message.metadata as { run_id?: unknown } | null)?.run_id
  return typeof id === "string" ? id : undefined
}

/** The run still going in a history: its last message is not the run's final answer. */
const unfinishedRun = (messages: ReadonlyArray<StoredMessage>): string | undefined => {
  const last = messages.at(-1)
  if (!last) return undefined
  const finalAnswer = last.role === "assistant" && !(last.tool_calls && last.tool_calls.length > 0)
  return finalAnswer ? undefined : runIdOf(last)
}

/** The run a message from the composer starts in `session`. */
const chatStart = (session: SessionRef, { text, attachments, model, resendOf }: ComposedMessage): RunStart => ({
  kind: "chat",
  payload: {
    message: text,
    session_id: session.id,
    bot_id: session.bot_id,
    client_id: session.client_id,
    attachments: attachments ?? [],
    passive: false,
    ...(model ? { model_override: model } : {}),
    ...(resendOf ? { resend_of: resendOf } : {})
  }
})

export const Conversation = (
  { auth, session, onActivity }: { readonly auth: AuthSession; readonly session: SessionRef; readonly onActivity: () => void }
) => {
  const [messages, setMessages] = useState<ReadonlyArray<StoredMessage> | undefined>()
  const [live, setLive] = useState<Live | undefined>()
  const [error, setError] = useState<string | undefined>()
  const follower = useRef<RunFollower | undefined>(undefined)
  // The parent's callback changes with its every render; the conversation must not restart for it.
  const activity = useRef(onActivity)
  useEffect(() => {
    activity.current = onActivity
  })
  const composerBar = useRef<HTMLDivElement>(null)
  const [client, setClient] = useState<CairnClient | undefined>()
  const [models, setModels] = useState<ReadonlyArray<string>>([])
  useEffect(() => {
    void auth.client().then(setClient)
    // The model override lists the configured providers' models, for those who may read them, by the
    // id a chat names them with (`<provider>/<model>` but on the default provider).
    if (!auth.can("providers:read")) return
    auth
      .call((client) => client.providers.list())
      .then(
        ({ providers }) =>
          setModels([
            ...new Set(
              providers.flatMap((provider) =>
                provider.models.map((model) => (provider.is_default ? model.id : `${provider.id}/${model.id}`))
              )
            )
          ]),
        () => setModels([])
      )
  }, [auth])

  const loadMessages = useCallback(
    () =>
      auth
        .call((client) => client.sessions.messages({ path: { id: session.id } }))
        .catch((failure: unknown) => {
          // A conversation started here exists only once its first message is sent.
          if ((failure as { _tag?: string })._tag === "NotFound" || (failure as { _tag?: string })._tag === "SessionNotFound") return []
          throw failure
        }),
    [auth, session.id]
  )

  const follow = useCallback(
    (start: RunStart, initial: Live) => {
      follower.current?.close()
      setLive(initial)
      follower.current = followRun(() => auth.streaming(), session.id, start, {
        onEvent: (event, seq) => {
          setLive((current) => current && { ...current, turn: applyEvent(current.turn, event), reconnecting: false })
          // The run's first event: the session exists now, so the list can show it at once.
          if (seq <= 1 && start.kind === "chat") activity.current()
        },
        onConnection: (connected) => setLive((current) => current && { ...current, reconnecting: !connected }),
        onEnd: (failure) => {
          follower.current = undefined
          void loadMessages().then(
            (stored) => {
              setMessages(stored)
              // A failed or refused run leaves its notice; a finished one is now in the history.
              setLive((
                current
              ) => (current && (failure || current.turn.status === "failed")
                ? {
                  turn: { ...current.turn, status: "failed", error: current.turn.error ?? failure },
                  ...(current.userText !== undefined ? { retryText: current.userText } : {})
                }
                : undefined)
              )
              activity.current()
            },
            (problem: unknown) => setError(describeError(problem))
          )
        }
      })
    },
    [auth, loadMessages, session.id]
  )

  useEffect(() => {
    let gone = false
    loadMessages().then(
      (stored) => {
        if (gone) return
        setMessages(stored)
        const running = unfinishedRun(stored)
        // A branch made by Edit or Regenerate sends its message as it opens.
        const handed = takeHandoff(session.id)
        if (running && auth.can("chat")) {
          follow({ kind: "rejoin", sessionId: session.id, runId: running }, { turn: emptyTurn, runId: running })
        } else if (handed) {
          const here = { id: session.id, bot_id: session.bot_id, client_id: session.client_id }
          follow(chatStart(here, handed), { turn: emptyTurn, userText: handed.text })
        }
      },
      (problem: unknown) => setError(describeError(problem))
    )
    return () => {
      gone = true
      follower.current?.close()
    }
  }, [auth, follow, loadMessages, session.id, session.bot_id, session.client_id])

  const running = live !== undefined && live.turn.status === "running"
  const { scroller, content, away, onScroll, leaveBottom, resume, jumpToLatest } = useFollowScroll(messages, live, composerBar)
  const showError = useCallback((problem: unknown) => setError(describeError(problem)), [])
  // Edit and Regenerate branch the conversation (useChatBranches.ts); not while an answer is written.
  const handlers = useChatBranches(auth, session.id, messages, showError, running)
  // Documents in the chat: dropped in the composer, made this conversation's (useSessionDocuments.ts).
  const documents = useSessionDocuments(auth, session, useCallback(() => activity.current(), []))
  // The cursor starts in the message box (where a pointer is fine: on a phone it would open the keyboard).
  useEffect(() => {
    if (client && window.matchMedia("(pointer: fine)").matches) composerBar.current?.querySelector("textarea")?.focus()
  }, [client])

  /** A message from the composer: its text, uploaded images and the model chosen for it. */
  const send = (message: ComposedMessage) => {
    setError(undefined)
    resume()
    follow(chatStart(session, message), { turn: emptyTurn, userText: message.text })
  }

  const stop = () =>
    void auth
      .call((client) => client.chat.cancel({ payload: { client_id: session.client_id, bot_id: session.bot_id, session_id: session.id } }))
      .catch((problem: unknown) => setError(describeError(problem)))

  const decide = (approvalId: string, approved: boolean) =>
    void auth
      .call((client) => client.chat.decide({ path: { id: approvalId }, payload: { approved } }))
      .catch((problem: unknown) => setError(describeError(problem)))

  const shown = messages?.filter((m) => live?.runId === undefined || runIdOf(m) !== live.runId || m.role === "user")
  // A failed answer to a message sent here can be asked again, as it was.
  const retryText = live?.turn.status === "failed" ? live.retryText : undefined
  const retry = retryText !== undefined && auth.can("chat") ? () => send({ text: retryText, attachments: [], model: undefined }) : undefined

  return (
    <section
      className="conversation"
      aria-label="Conversation"
      onKeyDown={(event) => {
        if (event.key === "Escape" && !event.shiftKey && running) {
          event.preventDefault()
          stop()
        }
      }}
    >
      <ConversationTools auth={auth} sessionId={session.id} models={models} stored={!!messages?.length} onError={showError} />
      <div
        className="messages"
        ref={scroller}
        data-testid="messages"
        role="log"
        aria-label="Chat history"
        // The keyboard scrolls it too (the arrows, Page Up and Down once it has focus).
        tabIndex={0}
        onScroll={onScroll}
        onWheel={(event) => event.deltaY < 0 && leaveBottom()}
        onKeyDown={(event) => ["ArrowUp", "PageUp", "Home"].includes(event.key) && leaveBottom()}
      >
        <div className="messages-content" ref={content}>
          {shown === undefined ? <p className="muted">Loading…</p> : <MessageList messages={shown} handlers={handlers} />}
          {documents.added.map((name, index) => (
            <p key={index} className="notice" role="status">
              Document added: {name} was added to this conversation; answers here can draw on it.
            </p>
          ))}
          {live ? <LiveAnswer live={live} canDecide={auth.can("approvals:write")} onDecide={decide} onRetry={retry} /> : null}
          {error ? <p role="alert" className="error">{error}</p> : null}
        </div>
      </div>
      {away ?
        <button type="button" className="jump-latest" onClick={jumpToLatest}>Jump to latest ↓</button> :
        null}
      {auth.can("chat") ?
        (
          <ComposerBar
            barRef={composerBar}
            client={client}
            onSend={send}
            running={running}
            allowAttachments={auth.can("attachments:write")}
            documents={documents}
            models={models}
            onStop={stop}
          />
        ) :
        <p className="muted">Your account may read conversations but not chat.</p>}
    </section>
  )
}
