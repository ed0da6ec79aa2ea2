/** Reads a Server-Sent Events response the way a client would: frames, ids and JSON data. */

export interface SseEvent {
  readonly id: number | undefined
  readonly data: any
  readonly raw: string
}

export interface SseReader {
  /** The next event (keepalive comments skipped); undefined when the stream ended. */
  readonly next: () => Promise<SseEvent | undefined>
  /** Every remaining event until the stream ends. */
  readonly rest: () => Promise<Array<SseEvent>>
  /** Events until one satisfies the predicate (included). */
  readonly until: (predicate: (event: SseEvent) => boolean) => Promise<Array<SseEvent>>
  /** Drops the connection, as a client that goes away. */
  readonly abort: () => void
}

export const readSse = (response: Response, controller?: AbortController): SseReader => {
  if (!response.body) throw new Error("The response has no body")
  const reader = response.body.getReader()
  const decoder = new TextDecoder()
  let buffer = ""
  let ended = false
  const pending: Array<SseEvent> = []

  const parseFrame = (frame: string): SseEvent | undefined => {
    let id: number | undefined
    const data: Array<string> = []
    for (const line of frame.split("\n")) {
      if (line.startsWith(":")) continue
      if (line.startsWith("id:")) id = Number(line.slice(3).trim())
      else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""))
    }
    if (data.length === 0) return undefined
    const raw = data.join("\n")
    return { id, data: JSON.parse(raw), raw }
  }

  const next = async (): Promise<SseEvent | undefined> => {
    for (;;) {
      if (pending.length > 0) return pending.shift()
      const boundary = buffer.indexOf("\n\n")
      if (boundary >= 0) {
        const frame = buffer.slice(0, boundary)
        buffer = buffer.slice(boundary + 2)
        const event = parseFrame(frame)
        if (event) return event
        continue
      }
      if (ended) return undefined
      const chunk = await reader.read().catch(() => ({ done: true as const, value: undefined }))
      if (chunk.done) ended = true
      else buffer += decoder.decode(chunk.value, { stream: true })
    }
  }

  const rest = async () => {
    const out: Array<SseEvent> = []
    for (let event = await next(); event; event = await next()) out.push(event)
    return out
  }

  const until = async (predicate: (event: SseEvent) => boolean) => {
    const out: Array<SseEvent> = []
    for (let event = await next(); event; event = await next()) {
      out.push(event)
      if (predicate(event)) return out
    }
    throw new Error(`Stream ended before the awaited event; got ${out.map((e) => e.data.type).join(", ")}`)
  }

  return {
    next,
    rest,
    until,
    abort: () => {
      controller?.abort()
      void reader.cancel().catch(() => {})
    }
  }
}

/** A whole `/chat/stream` answer to `body` (which must be 200): each event's data, in order. */
export const streamedEvents = async (
  server: { readonly request: (path: string, init?: RequestInit) => Promise<Response> },
  body: Record<string, unknown>
): Promise<Array<any>> => {
  const controller = new AbortController()
  const response = await server.request("/chat/stream", { method: "POST", body: JSON.stringify(body), signal: controller.signal })
  if (response.status !== 200) throw new Error(`/chat/stream answered ${response.status}: ${await response.text()}`)
  return (await readSse(response, controller).rest()).map((event) => event.data)
}
