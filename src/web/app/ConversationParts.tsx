/** Pieces of a conversation's view: the answer in progress, and the message box with its Stop button. */
import type { RefObject } from "react"
import type { CairnClient } from "../../client.ts"
import { type ComposedMessage, Composer } from "../shared/composer/Composer.tsx"
import { type Turn } from "../shared/turn.ts"
import { SessionDocumentChips } from "./SessionDocumentChips.tsx"
import { TurnView } from "./TurnView.tsx"
import type { useSessionDocuments } from "./useSessionDocuments.ts"

/** The answer being written: the message sent here that started it, the turn so far, a lost connection. */
export const LiveAnswer = ({ live, canDecide, onDecide, onRetry }: {
  readonly live: { readonly turn: Turn; readonly userText?: string; readonly reconnecting?: boolean }
  readonly canDecide: boolean
  readonly onDecide: (approvalId: string, approved: boolean) => void
  readonly onRetry: (() => void) | undefined
}) => (
  <>
    {live.userText !== undefined ?
      (
        <div className="message user">
          <p className="plain">{live.userText}</p>
        </div>
      ) :
      null}
    <TurnView turn={live.turn} canDecide={canDecide} onDecide={onDecide} onRetry={onRetry} />
    {live.reconnecting ? <p className="notice">Connection lost; reconnecting…</p> : null}
  </>
)

export const ComposerBar = ({ barRef, client, onSend, running, allowAttachments, documents, models, onStop }: {
  readonly barRef: RefObject<HTMLDivElement | null>
  readonly client: CairnClient | undefined
  readonly onSend: (message: ComposedMessage) => void
  readonly running: boolean
  readonly allowAttachments: boolean
  /** The conversation's documents (useSessionDocuments.ts): dropped files go there, shown as chips. */
  readonly documents: ReturnType<typeof useSessionDocuments>
  readonly models: ReadonlyArray<string>
  readonly onStop: () => void
}) => (
  <div className="composer-bar" ref={barRef}>
    {client ?
      (
        <Composer
          client={client}
          onSend={onSend}
          busy={running}
          allowAttachments={allowAttachments}
          allowVoice
          allowModelOverride={models.length > 0}
          models={models}
          {...(documents.enabled ?
            {
              onDocuments: documents.add,
              documents: <SessionDocumentChips chips={documents.chips} onRemove={documents.remove} />
            } :
            {})}
        />
      ) :
      null}
    {running ? <button type="button" className="stop" onClick={onStop}>Stop</button> : null}
  </div>
)
