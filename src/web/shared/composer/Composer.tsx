/**
 * The message composer shared by the chat page and the widget: a text area (Enter sends,
 * Shift+Enter breaks the line), image attachments by paste, drop or file pick (uploaded through the
 * attachments API as they are added, previewed, removable), documents (PDF, text, Markdown) handed
 * to the caller when it takes them (`onDocuments`: the chat adds them to the conversation), voice input (recorded in the browser,
 * transcribed by `/transcribe`, put into the text area to edit before sending) and an optional
 * model override. Every call goes through the typed client it is given, so the caller decides the
 * credential (a user's JWT, a widget token).
 */
import { type KeyboardEvent, type ReactNode, useId, useRef, useState } from "react"
import type { CairnClient } from "../../../client.ts"
import type { AttachmentReference } from "../../../sessions/Attachments.ts"
import { AttachIcon, MicIcon, SendIcon, StopIcon, WaitIcon } from "./icons.tsx"
import { documentAccept, imageTypes } from "./upload.ts"
import { type PendingImage, useAttachments } from "./useAttachments.ts"
import { useVoiceInput, type VoiceState } from "./useVoiceInput.ts"
import { voiceSupported } from "./voice.ts"
import "./composer.css"

export interface ComposedMessage {
  readonly text: string
  readonly attachments: ReadonlyArray<AttachmentReference>
  /** The model chosen for this message; undefined for the bot's own. */
  readonly model: string | undefined
  /** Regenerate, edit and resend: the stored message this one is sent again in place of (its images go again). */
  readonly resendOf?: string
}

export interface ComposerProps {
  readonly client: CairnClient
  readonly onSend: (message: ComposedMessage) => void | Promise<void>
  readonly disabled?: boolean
  /** An answer is being written: the text area stays usable (and focused), only sending waits. */
  readonly busy?: boolean
  readonly allowModelOverride?: boolean
  readonly models?: ReadonlyArray<string>
  readonly allowVoice?: boolean
  readonly allowAttachments?: boolean
  readonly placeholder?: string
  /** Documents dropped or picked (PDF, text, Markdown): given to the caller, who adds them to the conversation. */
  readonly onDocuments?: (files: ReadonlyArray<File>) => void
  /** The caller's view of those documents (chips with their state), shown above the text area. */
  readonly documents?: ReactNode
}

/** The images added so far, each with its upload state and a button that removes it. */
const AttachedImages = ({ images, onRemove }: {
  readonly images: ReadonlyArray<PendingImage>
  readonly onRemove: (key: number) => void
}) => (
  <ul className="cairn-composer__images" aria-label="Attached images">
    {images.map((image) => (
      <li key={image.key} className={`cairn-composer__image cairn-composer__image--${image.state}`} data-state={image.state}>
        <img src={image.preview} alt={image.name} />
        {image.state === "uploading" && <span className="cairn-composer__badge">Uploading…</span>}
        {image.state === "failed" && (
          <span className="cairn-composer__badge" role="alert">
            {image.error}
          </span>
        )}
        <button
          type="button"
          className="cairn-composer__remove"
          aria-label={`Remove ${image.name}`}
          onClick={() =>
            onRemove(image.key)}
        >
          <span aria-hidden="true">×</span>
        </button>
      </li>
    ))}
  </ul>
)

/** The attach button and the hidden file picker it opens. */
const AttachButton = ({ disabled, onFiles, documents }: {
  readonly disabled: boolean
  readonly onFiles: (files: ReadonlyArray<File>) => void
  /** Documents are taken too. */
  readonly documents: boolean
}) => {
  const filePicker = useRef<HTMLInputElement>(null)
  return (
    <>
      <input
        ref={filePicker}
        type="file"
        accept={[...imageTypes, ...(documents ? [documentAccept] : [])].join(",")}
        multiple
        hidden
        data-testid="composer-file"
        onChange={(event) => {
          onFiles([...(event.target.files ?? [])])
          event.target.value = ""
        }}
      />
      <button
        type="button"
        className="cairn-composer__button"
        aria-label={documents ? "Attach images or documents" : "Attach images"}
        disabled={disabled}
        onClick={() => filePicker.current?.click()}
      >
        <AttachIcon />
      </button>
    </>
  )
}

const VoiceButton = ({ voice, disabled, onToggle }: {
  readonly voice: VoiceState
  readonly disabled: boolean
  readonly onToggle: () => void
}) => (
  <button
    type="button"
    className={`cairn-composer__button${voice.kind === "recording" ? " cairn-composer__button--recording" : ""}`}
    aria-label={voice.kind === "recording" ? "Stop recording" : voice.kind === "transcribing" ? "Transcribing" : "Record voice"}
    aria-pressed={voice.kind === "recording"}
    disabled={disabled || voice.kind === "transcribing"}
    onClick={onToggle}
  >
    {voice.kind === "recording" ? <StopIcon /> : voice.kind === "transcribing" ? <WaitIcon /> : <MicIcon />}
  </button>
)

/** The model override: empty is the bot's own. */
const ModelPicker = ({ models, model, disabled, onChange }: {
  readonly models: ReadonlyArray<string>
  readonly model: string
  readonly disabled: boolean
  readonly onChange: (model: string) => void
}) => {
  const modelId = useId()
  return (
    <div className="cairn-composer__model">
      <label htmlFor={modelId}>Model</label>
      <select id={modelId} value={model} onChange={(event) => onChange(event.target.value)} disabled={disabled}>
        <option value="">The bot's own</option>
        {models.map((name) => (
          <option key={name} value={name}>
            {name}
          </option>
        ))}
      </select>
    </div>
  )
}

export const Composer = ({
  client,
  onSend,
  disabled = false,
  busy = false,
  allowModelOverride = false,
  models = [],
  allowVoice = true,
  allowAttachments = true,
  placeholder = "Message",
  onDocuments,
  documents
}: ComposerProps) => {
  const [text, setText] = useState("")
  const [model, setModel] = useState("")
  const [notice, setNotice] = useState<string | null>(null)
  const textArea = useRef<HTMLTextAreaElement>(null)
  const attachments = useAttachments(client, allowAttachments, setNotice, onDocuments)
  const { voice, toggle: toggleVoice } = useVoiceInput(client, {
    onHeard: (heard) => {
      if (heard.trim().length === 0) setNotice("Nothing was heard")
      else setText((current) => [current.trim(), heard.trim()].filter(Boolean).join(" "))
      textArea.current?.focus()
    },
    onNotice: setNotice
  })

  const { ready } = attachments
  const canSend = !disabled && !busy && !attachments.uploading && voice.kind === "idle" && (text.trim().length > 0 || ready.length > 0)

  const send = async () => {
    if (!canSend) return
    const message: ComposedMessage = {
      text: text.trim(),
      attachments: ready.map((image) => ({ attachment_id: image.attachmentId! })),
      model: allowModelOverride && model ? model : undefined
    }
    setText("")
    setNotice(null)
    attachments.clear()
    await onSend(message)
    textArea.current?.focus()
  }

  const onKeyDown = (event: KeyboardEvent<HTMLTextAreaElement>) => {
    // Enter sends; Shift+Enter is a new line; an IME's Enter confirms its composition.
    if (event.key === "Enter" && !event.shiftKey && !event.nativeEvent.isComposing) {
      event.preventDefault()
      void send()
    }
  }

  return (
    <form
      className={`cairn-composer${attachments.dragging ? " cairn-composer--dragging" : ""}`}
      data-testid="composer"
      onSubmit={(event) => {
        event.preventDefault()
        void send()
      }}
      {...attachments.dropTarget}
    >
      {documents}
      {attachments.images.length > 0 && <AttachedImages images={attachments.images} onRemove={attachments.remove} />}
      {notice && (
        <p className="cairn-composer__notice" role="status">
          {notice}
        </p>
      )}
      <div className="cairn-composer__row">
        <textarea
          ref={textArea}
          className="cairn-composer__text"
          aria-label="Message"
          placeholder={placeholder}
          rows={2}
          value={text}
          disabled={disabled}
          onChange={(event) => setText(event.target.value)}
          onKeyDown={onKeyDown}
          onPaste={attachments.onPaste}
        />
        <div className="cairn-composer__actions">
          {allowAttachments && <AttachButton disabled={disabled} onFiles={attachments.addFiles} documents={!!onDocuments} />}
          {allowVoice && voiceSupported() && <VoiceButton voice={voice} disabled={disabled} onToggle={() => void toggleVoice()} />}
          <button type="submit" className="cairn-composer__button cairn-composer__send" aria-label="Send" disabled={!canSend}>
            <SendIcon />
          </button>
        </div>
      </div>
      {allowModelOverride && models.length > 0 && <ModelPicker models={models} model={model} disabled={disabled} onChange={setModel} />}
    </form>
  )
}
