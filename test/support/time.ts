/**
 * Time in tests. A test asserts what happened (a condition, an order of events, a count), never how
 * long it took: timings belong in bench/. What a test waits for it waits for as a condition, with a
 * deadline that only says when to give up; every deadline here (and vitest's own, see
 * vitest.config.ts) stretches with TEST_TIME_SCALE (default 1), for a machine busy with other work.
 */

/** TEST_TIME_SCALE: how many times longer than the written deadlines a test may wait (default 1). */
export const timeScale: number = (() => {
  const value = Number(process.env.TEST_TIME_SCALE ?? "1")
  return Number.isFinite(value) && value > 0 ? value : 1
})()

/** A deadline of `ms`, stretched by TEST_TIME_SCALE. */
export const scaled = (ms: number): number => Math.ceil(ms * timeScale)

/**
 * How long a process of ours may take to start (the server to answer /health, the CLI to show its
 * prompt): a start from source (tsx, when dist/ is stale) on a machine busy with other work took
 * over a minute.
 */
export const processStartMs = scaled(120_000)

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

/**
 * Polls `probe` until it answers something other than undefined, and answers that; fails naming
 * `what` once `timeoutMs` (scaled) has passed without it.
 */
export const waitFor = async <A>(
  probe: () => Promise<A | undefined> | A | undefined,
  what: string,
  timeoutMs = 20_000,
  everyMs = 50
): Promise<A> => {
  const limit = scaled(timeoutMs)
  const deadline = Date.now() + limit
  for (;;) {
    const value = await probe()
    if (value !== undefined) return value
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what} (${limit} ms)`)
    await sleep(everyMs)
  }
}

/** Polls `check` until it holds; fails naming `what` once `timeoutMs` (scaled) has passed. */
export const eventually = async (
  check: () => Promise<boolean> | boolean,
  what: string,
  timeoutMs = 20_000,
  everyMs = 50
): Promise<void> => {
  await waitFor(async () => ((await check()) ? true : undefined), what, timeoutMs, everyMs)
}

/**
 * Reads until `done` holds of what was read, and answers that; fails naming `what` and the last
 * value read once `timeoutMs` (scaled) has passed.
 */
export const until = async <A>(
  read: () => Promise<A>,
  done: (value: A) => boolean,
  timeoutMs = 20_000,
  what = "the condition"
): Promise<A> => {
  let last: A | undefined
  try {
    return await waitFor(
      async () => {
        last = await read()
        return done(last) ? last : undefined
      },
      what,
      timeoutMs,
      100
    )
  } catch (error) {
    throw new Error(`${(error as Error).message}; last: ${JSON.stringify(last)?.slice(0, 500)}`, { cause: error })
  }
}

/** `promise`, or a failure naming `what` once `timeoutMs` (scaled) has passed without it settling. */
export const within = <A>(promise: Promise<A>, what: string, timeoutMs = 20_000): Promise<A> => {
  const limit = scaled(timeoutMs)
  let timer: ReturnType<typeof setTimeout> | undefined
  return Promise.race([
    promise,
    new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`Timed out waiting for ${what} (${limit} ms)`)), limit)))
  ]).finally(() => clearTimeout(timer))
}
