/**
 * The message composer shared by the chat page and the widget: a text area (Enter sends,
 * Shift+Enter breaks the line), image attachments by paste, drop or file pick (uploaded through the
 * attachments API as they are added, previewed, removable), voice input (recorded in the browser,
 * transcribed by `/transcribe`, put into the text area to edit before sending) and an optional
 * model override. Every call goes through the typed client it is given, so the caller decides the
 * credential (a user's JWT, a widget token).
 */
import { type ClipboardEvent, type DragEvent, type KeyboardEvent, useEffect, useId, useRef, useState } from "react"
import type { CairnClient } from "../../../client.ts"
import type { AttachmentReference } from "../../../sessions/Attachments.ts"
import { describeError } from "../calls.ts"
import { AttachIcon, MicIcon, SendIcon, StopIcon, WaitIcon } from "./icons.tsx"
import { imageTypes, isImage, uploadImage } from "./upload.ts"
import { type Recording, startRecording, transcribe, voiceSupported } from "./voice.ts"
import "./composer.css"

export interface ComposedMessage {
  readonly text: string
  readonly attachments: ReadonlyArray<AttachmentReference>
  /** The model chosen for this message; undefined for the bot's own. */
  readonly model: string | undefined
}

export interface ComposerProps {
  readonly client: CairnClient
  readonly onSend: (message: ComposedMessage) => void | Promise<void>
  readonly disabled?: boolean
  readonly allowModelOverride?: boolean
  readonly models?: ReadonlyArray<string>
  readonly allowVoice?: boolean
  readonly allowAttachments?: boolean
  readonly placeholder?: string
}

interface PendingImage {
  readonly key: number
  readonly name: string
  readonly preview: string
  readonly state: "uploading" | "ready" | "failed"
  readonly attachmentId?: string
  readonly error?: string
}

type VoiceState = { readonly kind: "idle" } | { readonly kind: "recording"; readonly recording: Recording } | {
  readonly kind: "transcribing"
}

let nextKey = 0

export const Composer = ({
  client,
  onSend,
  disabled = false,
  allowModelOverride = false,
  models = [],
  allowVoice = true,
  allowAttachments = true,
  placeholder = "Message"
}: ComposerProps) => {
  const [text, setText] = useState("")
  const [images, setImages] = useState<ReadonlyArray<PendingImage>>([])
  const [model, setModel] = useState("")
  const [voice, setVoice] = useState<VoiceState>({ kind: "idle" })
  const [notice, setNotice] = useState<string | null>(null)
  const [dragging, setDragging] = useState(false)
  const textArea = useRef<HTMLTextAreaElement>(null)
  const filePicker = useRef<HTMLInputElement>(null)
  const modelId = useId()
  const previews = useRef(new Set<string>())

  // Previews are object URLs: free them when the composer goes.
  useEffect(() => () => previews.current.forEach((url) => URL.revokeObjectURL(url)), [])

  const update = (key: number, change: Partial<PendingImage>) =>
    setImages((current) => current.map((image) => (image.key === key ? { ...image, ...change } : image)))

  const addFiles = (files: ReadonlyArray<File>) => {
    if (!allowAttachments) return
    const accepted = files.filter(isImage)
    if (accepted.length < files.length) setNotice(`Only images can be attached (${imageTypes.join(", ")})`)
    for (const file of accepted) {
      const key = nextKey++
      const preview = URL.createObjectURL(file)
      previews.current.add(preview)
      setImages((current) => [...current, { key, name: file.name || "pasted image", preview, state: "uploading" }])
      uploadImage(client, file).then(
        (attachmentId) => update(key, { state: "ready", attachmentId }),
        (error: unknown) => update(key, { state: "failed", error: describeError(error) })
      )
    }
  }

  const remove = (key: number) =>
    setImages((current) => {
      const gone = current.find((image) => image.key === key)
      if (gone) {
        URL.revokeObjectURL(gone.preview)
        previews.current.delete(gone.preview)
      }
      return current.filter((image) => image.key !== key)
    })

  const uploading = images.some((image) => image.state === "uploading")
  const ready = images.filter((image) => image.state === "ready")
  const canSend = !disabled && !uploading && voice.kind === "idle" && (text.trim().length > 0 || ready.length > 0)

  const send = async () => {
    if (!canSend) return
    const message: ComposedMessage = {
      text: text.trim(),
      attachments: ready.map((image) => ({ attachment_id: image.attachmentId! })),
      model: allowModelOverride && model ? model : undefined
    }
    setText("")
    setImages([])
    setNotice(null)
    for (const image of images) {
      URL.revokeObjectURL(image.preview)
      previews.current.delete(image.preview)
    }
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

  const onPaste = (event: ClipboardEvent<HTMLTextAreaElement>) => {
    const files = [...event.clipboardData.files]
    if (files.length === 0 || !allowAttachments) return
    event.preventDefault()
    addFiles(files)
  }

  const onDrop = (event: DragEvent<HTMLFormElement>) => {
    setDragging(false)
    if (!allowAttachments || event.dataTransfer.files.length === 0) return
    event.preventDefault()
    addFiles([...event.dataTransfer.files])
  }

  const toggleVoice = async () => {
    if (voice.kind === "recording") {
      setVoice({ kind: "transcribing" })
      try {
        const heard = await transcribe(client, await voice.recording.stop())
        if (heard.trim().length === 0) setNotice("Nothing was heard")
        else setText((current) => [current.trim(), heard.trim()].filter(Boolean).join(" "))
        textArea.current?.focus()
      } catch (error) {
        setNotice(`Transcription failed: ${describeError(error)}`)
      } finally {
        setVoice({ kind: "idle" })
      }
      return
    }
    try {
      setNotice(null)
      setVoice({ kind: "recording", recording: await startRecording() })
    } catch (error) {
      setNotice(`The microphone is not available: ${describeError(error)}`)
    }
  }

  const showVoice = allowVoice && voiceSupported()
  return (
    <form
      className={`cairn-composer${dragging ? " cairn-composer--dragging" : ""}`}
      data-testid="composer"
      onSubmit={(event) => {
        event.preventDefault()
        void send()
      }}
      onDragOver={(event) => {
        if (!allowAttachments) return
        event.preventDefault()
        setDragging(true)
      }}
      onDragLeave={() => setDragging(false)}
      onDrop={onDrop}
    >
      {images.length > 0 && (
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
                  remove(image.key)}
              >
                <span aria-hidden="true">×</span>
              </button>
            </li>
          ))}
        </ul>
      )}
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
          onPaste={onPaste}
        />
        <div className="cairn-composer__actions">
          {allowAttachments && (
            <>
              <input
                ref={filePicker}
                type="file"
                accept={imageTypes.join(",")}
                multiple
                hidden
                data-testid="composer-file"
                onChange={(event) => {
                  addFiles([...(event.target.files ?? [])])
                  event.target.value = ""
                }}
              />
              <button
                type="button"
                className="cairn-composer__button"
                aria-label="Attach images"
                disabled={disabled}
                onClick={() => filePicker.current?.click()}
              >
                <AttachIcon />
              </button>
            </>
          )}
          {showVoice && (
            <button
              type="button"
              className={`cairn-composer__button${voice.kind === "recording" ? " cairn-composer__button--recording" : ""}`}
              aria-label={voice.kind === "recording" ? "Stop recording" : voice.kind === "transcribing" ? "Transcribing" : "Record voice"}
              aria-pressed={voice.kind === "recording"}
              disabled={disabled || voice.kind === "transcribing"}
              onClick={() => void toggleVoice()}
            >
              {voice.kind === "recording" ? <StopIcon /> : voice.kind === "transcribing" ? <WaitIcon /> : <MicIcon />}
            </button>
          )}
          <button type="submit" className="cairn-composer__button cairn-composer__send" aria-label="Send" disabled={!canSend}>
            <SendIcon />
          </button>
        </div>
      </div>
      {allowModelOverride && models.length > 0 && (
        <div className="cairn-composer__model">
          <label htmlFor={modelId}>Model</label>
          <select id={modelId} value={model} onChange={(event) => setModel(event.target.value)} disabled={disabled}>
            <option value="">The bot's own</option>
            {models.map((name) => (
              <option key={name} value={name}>
                {name}
              </option>
            ))}
          </select>
        </div>
      )}
    </form>
  )
}
