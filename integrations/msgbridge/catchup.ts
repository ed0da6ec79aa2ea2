/**
 * Catch-up: first the ledger's items this integration recorded and did not decide (the process
 * stopped between recording a message and routing it, or routing failed), from what was recorded
 * with them; then the messages created since the cursor (less an overlap, in case a pushed one failed
 * while a later one went through), oldest first, through the same path as a pushed message. The
 * GUID set makes a message seen before a duplicate, so a message sent while Cairn was down is
 * answered exactly once, and nothing already answered is answered again.
 */
import type { InboundEntry, IntegrationContext } from "../../src/sdk/index.ts"
import { messagesAfter } from "./chatServer.ts"
import { type BridgeConfig, readConfig } from "./config.ts"
import { handleMessage, type InboundResult } from "./inbound.ts"
import { ChatMessage, decodeOr } from "./message.ts"
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
  /** Recorded messages not decided before (a restart), decided now. */
  readonly resumed: number
}

let running: Promise<CatchUpResult> | undefined

/** One catch-up at a time in this process; a second call waits for the one running. */
export const catchUp = (cairn: IntegrationContext): Promise<CatchUpResult> => {
  running ??= run(cairn).finally(() => {
    running = undefined
  })
  return running
}

/**
 * Decides one recorded message left undecided, from what was recorded with it: a restart's resume
 * (`catchup`) or a person's retry of its dead letter (`retry`, registered in hooks.ts).
 */
export const resumeEntry = async (cairn: IntegrationContext, entry: InboundEntry, origin: "catchup" | "retry", config?: BridgeConfig) => {
  const message = decodeOr(ChatMessage, entry.payload.message)
  if (!message.ok) {
    await cairn.inbound.settle(entry.id, "ignored", { reason: `unreadable: ${message.error}`.slice(0, 200) })
    return undefined
  }
  return handleMessage(cairn, message.value, origin, { config: config ?? readConfig(await cairn.settings.all()) })
}

/** Decides the recorded messages left undecided; how many. */
export const resumeOpen = async (cairn: IntegrationContext): Promise<number> => {
  const config = readConfig(await cairn.settings.all())
  let resumed = 0
  for (const entry of await cairn.inbound.open({ limit: PAGE })) {
    try {
      if (await resumeEntry(cairn, entry, "catchup", config)) resumed += 1
    } catch (error) {
      cairn.logger.warn(
        `Messaging bridge: message ${entry.external_id} could not be resumed: ${error instanceof Error ? error.message : String(error)}`
      )
    }
  }
  return resumed
}

const run = async (cairn: IntegrationContext): Promise<CatchUpResult> => {
  const resumed = await resumeOpen(cairn)
  const config = readConfig(await cairn.settings.all())
  const store = bridgeStore(cairn.store)
  const cursor = await store.cursor()
  if (cursor === undefined) {
    // The first start: history is not answered; from now on nothing is missed.
    await store.advanceCursor(Date.now())
    return { since: null, fetched: 0, triggered: 0, stored: 0, ignored: 0, resumed }
  }
  const since = cursor - OVERLAP_MS
  const counts = { fetched: 0, triggered: 0, stored: 0, ignored: 0, resumed }
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
