/**
 * Loading a page's data through the typed client: the value, the refusal (as one readable line),
 * and a reload. A load started for older arguments never overwrites a newer one's answer.
 */
import { useCallback, useEffect, useRef, useState } from "react"
import { describeError } from "../../shared/calls.ts"

export interface Loaded<A> {
  readonly data: A | undefined
  readonly error: string | undefined
  readonly loading: boolean
  readonly reload: () => Promise<void>
}

export const useLoad = <A>(load: () => Promise<A>, deps: ReadonlyArray<unknown>): Loaded<A> => {
  const [data, setData] = useState<A | undefined>()
  const [error, setError] = useState<string | undefined>()
  const [loading, setLoading] = useState(true)
  const generation = useRef(0)
  // The caller names the arguments the load reads, as with useEffect.
  // eslint-disable-next-line react-hooks/exhaustive-deps -- the deps are the caller's
  const run = useCallback(load, deps)
  const reload = useCallback(async () => {
    const mine = ++generation.current
    setLoading(true)
    try {
      const value = await run()
      if (mine === generation.current) {
        setData(value)
        setError(undefined)
      }
    } catch (failure) {
      if (mine === generation.current) setError(describeError(failure))
    } finally {
      if (mine === generation.current) setLoading(false)
    }
  }, [run])
  useEffect(() => void reload(), [reload])
  return { data, error, loading, reload }
}

/** Polls `reload` every `everyMs` while the page is open (the HUD's 30 s, a backup's progress). */
export const usePoll = (reload: () => unknown, everyMs: number, active = true) => {
  useEffect(() => {
    if (!active) return
    const timer = setInterval(() => void reload(), everyMs)
    return () => clearInterval(timer)
  }, [reload, everyMs, active])
}

/**
 * An action's state: `run` calls it, remembers a refusal as one line, and reports busy while it
 * runs (buttons disable themselves on it).
 */
export const useAction = () => {
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<string | undefined>()
  const run = useCallback(async <A>(work: () => Promise<A>): Promise<A | undefined> => {
    setBusy(true)
    setError(undefined)
    try {
      return await work()
    } catch (failure) {
      setError(describeError(failure))
      return undefined
    } finally {
      setBusy(false)
    }
  }, [])
  return { busy, error, run, setError }
}

/**
 * A destructive action asked about first (delete, revoke, cancel): `target` is what it would act
 * on, and the confirm dialog is open while there is one. `confirm` runs it; done, the dialog closes
 * and `after` runs (a reload); refused, the reason stays in `error` (shown in the dialog). Asking
 * again starts clean. `dialog` is what a `ConfirmDialog` takes of it.
 */
export const useConfirm = <T>(perform: (target: T) => Promise<unknown>, after: () => Promise<unknown>) => {
  const [target, setTarget] = useState<T | undefined>()
  const action = useAction()
  const ask = (next: T) => {
    action.setError(undefined)
    setTarget(next)
  }
  const close = () => setTarget(undefined)
  const confirm = async () => {
    if (target === undefined) return
    const done = await action.run(async () => {
      await perform(target)
      return true
    })
    if (done) {
      setTarget(undefined)
      await after()
    }
  }
  return {
    target,
    ask,
    error: action.error,
    dialog: { open: target !== undefined, onConfirm: () => void confirm(), onClose: close, busy: action.busy, error: action.error }
  }
}
