/**
 * Catch-up: the messages created since the cursor (less an overlap, in case a pushed one failed
 * while a later one went through), oldest first, through the same path as a pushed message. The
 * GUID set makes a message seen before a duplicate, so a message sent while Cairn was down is
 * answered exactly once, and nothing already answered is answered again.
 */
import type { IntegrationContext } from "../../src/sdk/index.ts"
import { messagesAfter } from "./chatServer.ts"
import { readConfig } from "./config.ts"
import { handleMessage, type InboundResult } from "./inbound.ts"
import { bridgeStore } from "./store.ts"

const OVERLAP_MS = 10 * 60_000
const PAGE = 100
const MAX_PAGES = 20

export interface CatchUpResult {
  readonly since: number | null
  readonly fetched: number
  readonly triggered: number
  readonly stored: number
  readonly ignored: number
}

let running: Promise<CatchUpResult> | undefined

/** One catch-up at a time in this process; a second call waits for the one running. */
export const catchUp = (cairn: IntegrationContext): Promise<CatchUpResult> => {
  running ??= run(cairn).finally(() => {
    running = undefined
  })
  return running
}

const run = async (cairn: IntegrationContext): Promise<CatchUpResult> => {
  const config = readConfig(await cairn.settings.all())
  const store = bridgeStore(cairn.store)
  const cursor = await store.cursor()
  if (cursor === undefined) {
    // The first start: history is not answered; from now on nothing is missed.
    await store.advanceCursor(Date.now())
    return { since: null, fetched: 0, triggered: 0, stored: 0, ignored: 0 }
  }
  const since = cursor - OVERLAP_MS
  const counts = { fetched: 0, triggered: 0, stored: 0, ignored: 0 }
  for (let page = 0; page < MAX_PAGES; page++) {
    const { messages, count } = await messagesAfter(cairn, config, since, { limit: PAGE, offset: page * PAGE })
    for (const message of messages) {
      counts.fetched += 1
      // Bound chats only: the legacy client answers unbound chats live, never from history.
      const result: InboundResult = await handleMessage(cairn, message, "catchup", { config })
      counts[result.status] += 1
      if (message.dateCreated) await store.advanceCursor(message.dateCreated)
    }
    if (count < PAGE) break
  }
  if (counts.triggered + counts.stored > 0) {
    cairn.logger.info(
      `Messaging bridge catch-up: ${counts.fetched} messages since ${
        new Date(since).toISOString()
      }, ${counts.triggered} answered, ${counts.stored} stored, ${counts.ignored} ignored`
    )
  }
  return { since, ...counts }
}
