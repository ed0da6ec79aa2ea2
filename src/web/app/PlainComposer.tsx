/**
 * A plain text composer until the shared `Composer` (src/web/shared/composer/: attachments, voice,
 * model override) arrives; it hands over the same message shape, so the conversation swaps one for
 * the other in one line.
 */
import { useState, type FormEvent, type KeyboardEvent } from "react"
import type { MessageAttachment } from "../../sessions/Attachments.ts"

export interface ComposerMessage {
  readonly text: string
  readonly attachments?: ReadonlyArray<typeof MessageAttachment.Type>
  readonly model?: string
}

export const PlainComposer = ({ onSend, disabled }: { readonly onSend: (message: ComposerMessage) => void; readonly disabled?: boolean }) => {
  const [text, setText] = useState("")
  const submit = (event?: FormEvent) => {
    event?.preventDefault()
    if (disabled || text.trim().length === 0) return
    onSend({ text })
    setText("")
  }
  // Enter sends; Shift+Enter starts a new line.
  const onKeyDown = (event: KeyboardEvent<HTMLTextAreaElement>) => {
    if (event.key === "Enter" && !event.shiftKey && !event.nativeEvent.isComposing) {
      event.preventDefault()
      submit()
    }
  }
  return (
    <form className="composer" onSubmit={submit}>
      <textarea
        aria-label="Message"
        placeholder="Message (Enter to send, Shift+Enter for a new line)"
        rows={2}
        value={text}
        onChange={(event) => setText(event.target.value)}
        onKeyDown={onKeyDown}
      />
      <button type="submit" className="primary" disabled={disabled || text.trim().length === 0}>Send</button>
    </form>
  )
}
