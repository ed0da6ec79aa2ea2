/** What this integration's files share in one server process: its context, and one poll at a time. */
import type { IntegrationContext } from "../../src/sdk/index.ts"

let context: IntegrationContext | undefined

export const useContext = (cairn: IntegrationContext) => {
  context = cairn
}

export const cairnContext = (): IntegrationContext => {
  if (!context) throw new Error("The mailbox integration has not loaded")
  return context
}

let queue: Promise<unknown> = Promise.resolve()

/** Runs `task` after every task queued before it in this process (poll cycles never overlap here). */
export const oneAtATime = <A>(task: () => Promise<A>): Promise<A> => {
  const next = queue.then(task, task)
  queue = next.catch(() => undefined)
  return next
}
