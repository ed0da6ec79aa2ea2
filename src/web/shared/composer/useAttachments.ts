/**
 * The composer's image attachments: added by paste, drop or file pick, each uploaded through the
 * attachments API as it is added and previewed from an object URL until it is removed or sent.
 */
import { type ClipboardEvent, type DragEvent, useEffect, useRef, useState } from "react"
import type { CairnClient } from "../../../client.ts"
import { describeError } from "../calls.ts"
import { imageTypes, isDocument, isImage, uploadImage } from "./upload.ts"

export interface PendingImage {
  readonly key: number
  readonly name: string
  readonly preview: string
  readonly state: "uploading" | "ready" | "failed"
  readonly attachmentId?: string
  readonly error?: string
}

let nextKey = 0

/**
 * `allowed` false ignores every way of adding; `onNotice` says why a file was left out;
 * `onDocuments`, when given, takes the files that are documents (PDF, text, Markdown) rather than images.
 */
export const useAttachments = (
  client: CairnClient,
  allowed: boolean,
  onNotice: (notice: string) => void,
  onDocuments?: (files: ReadonlyArray<File>) => void
) => {
  const [images, setImages] = useState<ReadonlyArray<PendingImage>>([])
  const [dragging, setDragging] = useState(false)
  const previews = useRef(new Set<string>())

  // Previews are object URLs: free them when the composer goes.
  useEffect(() => () => previews.current.forEach((url) => URL.revokeObjectURL(url)), [])

  const update = (key: number, change: Partial<PendingImage>) =>
    setImages((current) => current.map((image) => (image.key === key ? { ...image, ...change } : image)))

  const addFiles = (files: ReadonlyArray<File>) => {
    if (!allowed) return
    const documents = onDocuments ? files.filter(isDocument) : []
    if (documents.length > 0) onDocuments?.(documents)
    const accepted = files.filter(isImage)
    if (accepted.length + documents.length < files.length) {
      onNotice(
        onDocuments
          ? `Only images (${imageTypes.join(", ")}) and documents (PDF, text, Markdown) can be attached`
          : `Only images can be attached (${imageTypes.join(", ")})`
      )
    }
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

  /** Empties the list once its images are sent, freeing their previews. */
  const clear = () => {
    setImages([])
    for (const image of images) {
      URL.revokeObjectURL(image.preview)
      previews.current.delete(image.preview)
    }
  }

  const onPaste = (event: ClipboardEvent<HTMLTextAreaElement>) => {
    const files = [...event.clipboardData.files]
    if (files.length === 0 || !allowed) return
    event.preventDefault()
    addFiles(files)
  }

  /** The handlers that make the composer a drop target. */
  const dropTarget = {
    onDragOver: (event: DragEvent<HTMLFormElement>) => {
      if (!allowed) return
      event.preventDefault()
      setDragging(true)
    },
    onDragLeave: () => setDragging(false),
    onDrop: (event: DragEvent<HTMLFormElement>) => {
      setDragging(false)
      if (!allowed || event.dataTransfer.files.length === 0) return
      event.preventDefault()
      addFiles([...event.dataTransfer.files])
    }
  }

  return {
    images,
    uploading: images.some((image) => image.state === "uploading"),
    ready: images.filter((image) => image.state === "ready"),
    dragging,
    addFiles,
    remove,
    clear,
    onPaste,
    dropTarget
  }
}
