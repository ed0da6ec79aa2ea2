/**
 * Follows the server's live log (`GET /api/v1/admin/logs/stream`) through the typed client's
 * streaming reader: the lines of the last ten minutes the server kept, then each as it is written.
 * A dropped connection (a restart, the end at shutdown) is rejoined after the last line seen, so
 * nothing recent is missed or shown twice; a refusal (403) ends it with the reason. While paused,
 * lines are held (the newest `shownMost`) and shown at once on resume.
 */
import { Cause, Effect, Exit, Fiber, Option, Stream } from "effect"
import { useEffect, useRef, useState } from "react"
import type { LogTailEvent } from "../../../logs/Model.ts"
import type { AuthSession } from "../../shared/session.ts"

/** The most items the view keeps: older ones leave from the top. */
export const shownMost = 1000
const replayMs = 10 * 60_000
const retryDelayMs = (attempt: number) => Math.min(10_000, 500 * 2 ** attempt)

export type TailItem = LogTailEvent & { readonly key: string }
export type TailStatus = "connecting" | "live" | "reconnecting" | "stopped"

export interface TailFilters {
  readonly level: "" | "trace" | "debug" | "info" | "warning" | "error" | "fatal"
  readonly q: string
}

const kept = (items: ReadonlyArray<TailItem>) => (items.length > shownMost ? items.slice(items.length - shownMost) : items)

export const useLogTail = (auth: AuthSession, on: boolean, filters: TailFilters, paused: boolean) => {
  const [items, setItems] = useState<ReadonlyArray<TailItem>>([])
  const [held, setHeld] = useState(0)
  const [status, setStatus] = useState<TailStatus>("stopped")
  const [error, setError] = useState<string | undefined>()
  const pausedRef = useRef(paused)
  const heldItems = useRef<Array<TailItem>>([])
  const { level, q } = filters

  // On resume, what was held is shown.
  useEffect(() => {
    pausedRef.current = paused
    if (!paused && heldItems.current.length > 0) {
      const batch = heldItems.current
      heldItems.current = []
      setHeld(0)
      setItems((shown) => kept([...shown, ...batch]))
    }
  }, [paused])

  useEffect(() => {
    if (!on) return
    let closed = false
    let last: string | undefined
    let fiber: Fiber.RuntimeFiber<void, unknown> | undefined
    let attempt = 0
    let markers = 0
    let pending: Array<TailItem> = []
    let scheduled: ReturnType<typeof setTimeout> | undefined
    setItems([])
    heldItems.current = []
    setHeld(0)
    setError(undefined)
    // Lines arrive in bursts: one render for a burst.
    const flush = () => {
      scheduled = undefined
      const batch = pending
      pending = []
      if (pausedRef.current) {
        heldItems.current = kept([...heldItems.current, ...batch]) as Array<TailItem>
        setHeld(heldItems.current.length)
      } else {
        setItems((shown) => kept([...shown, ...batch]))
      }
    }
    const receive = (event: LogTailEvent) => {
      if (event.type === "line") last = event.id
      attempt = 0
      pending.push({ ...event, key: event.type === "line" ? event.id : `skipped-${++markers}` })
      scheduled ??= setTimeout(flush, 50)
    }
    const connect = async () => {
      if (closed) return
      setStatus(last === undefined ? "connecting" : "reconnecting")
      const client = await auth.streaming()
      if (closed) return
      const query = {
        ...(level ? { level } : {}),
        ...(q ? { q } : {}),
        ...(last === undefined ? { since: new Date(Date.now() - replayMs) } : { after: last })
      }
      fiber = Effect.runFork(Stream.runForEach(client.logs(query), (event) => Effect.sync(() => receive(event))))
      setStatus("live")
      const exit = await Effect.runPromise(Fiber.await(fiber))
      if (closed) return
      const failure = Exit.isFailure(exit) ? Option.getOrUndefined(Cause.failureOption(exit.cause)) : undefined
      const refused = failure as { readonly _tag?: string; readonly status?: number; readonly detail?: string } | undefined
      if (refused?._tag === "StreamRefused" && (refused.status ?? 500) < 500) {
        setError(refused.detail ?? "The log tail was refused")
        setStatus("stopped")
        return
      }
      setStatus("reconnecting")
      await new Promise((resolve) => setTimeout(resolve, retryDelayMs(attempt++)))
      await connect()
    }
    void connect().catch((problem: unknown) => {
      setError(String(problem))
      setStatus("stopped")
    })
    return () => {
      closed = true
      clearTimeout(scheduled)
      if (fiber) Effect.runFork(Fiber.interrupt(fiber))
      setStatus("stopped")
    }
  }, [auth, on, level, q])

  const clear = () => setItems([])
  return { items, held, status, error, clear }
}
