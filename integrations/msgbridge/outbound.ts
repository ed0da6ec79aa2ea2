/**
 * Sending to a chat: a reply is split at MSGBRIDGE_MAX_MESSAGE_CHARS; each part has a deterministic
 * tempGuid (`cairn-<id>-<part>`), is recorded for echo detection before it goes out, and is marked
 * sent once the server has it. A send that fails or times out is never blindly retried: a message
 * query for that tempGuid (or the same text from the account just now) decides whether it was
 * delivered. A part that was not is an error, and the dispatcher's retry sends only the parts still
 * missing. When the chat server cannot be asked at all, the send is `UncertainDelivery`: the
 * dispatcher records it `uncertain` and never repeats it.
 */
import * as crypto from "node:crypto"
import { type IntegrationContext, UncertainDelivery } from "../../src/sdk/index.ts"
import { ChatServerError, messagesAfter, sendText } from "./chatServer.ts"
import { type BridgeConfig, readConfig } from "./config.ts"
import type { ChatMessage } from "./message.ts"
import { splitText } from "./routing.ts"
import { type BridgeStore, bridgeStore, TEMP_GUID_PREFIX } from "./store.ts"

/** How long after a failed send its message may take to show up in a query. */
const VERIFY_ATTEMPTS = 3
const VERIFY_WAIT_MS = 1000
/** How far the chat server's clock may be behind ours. */
const CLOCK_SKEW_MS = 2000

/**
 * The account's message in the chat that is this send: the same tempGuid, or (a server that does not
 * echo tempGuids) the same text, sent since the send began and not a message the bridge already
 * knows (an identical earlier reply is not this one). `absent` only when the chat server answered
 * the query and the message was not there; `unknown` when no query could be made.
 */
const delivered = async (
  cairn: IntegrationContext,
  config: BridgeConfig,
  store: BridgeStore,
  chatGuid: string,
  text: string,
  tempGuid: string,
  since: number
): Promise<{ readonly found: ChatMessage } | "absent" | "unknown"> => {
  let answered = false
  for (let attempt = 0; attempt < VERIFY_ATTEMPTS; attempt++) {
    try {
      const { messages } = await messagesAfter(cairn, config, since - CLOCK_SKEW_MS, { chatGuid, limit: 50 })
      answered = true
      for (const m of messages) {
        if (!m.isFromMe) continue
        if (m.tempGuid === tempGuid) return { found: m }
        if ((m.text ?? "").trim() === text.trim() && !m.tempGuid?.startsWith(TEMP_GUID_PREFIX) && !(await store.seen(m.guid))) {
          return { found: m }
        }
      }
    } catch (error) {
      cairn.logger.warn(
        `Messaging bridge: could not check whether a send to ${chatGuid} arrived: ${error instanceof Error ? error.message : String(error)}`
      )
    }
    if (attempt < VERIFY_ATTEMPTS - 1) await new Promise((resolve) => setTimeout(resolve, VERIFY_WAIT_MS))
  }
  return answered ? "absent" : "unknown"
}

export interface SendResult {
  readonly parts: number
  readonly guids: ReadonlyArray<string | null>
  /** Parts found already sent (by an earlier attempt) and not sent again. */
  readonly skipped: number
  /** Parts whose send failed but which the server had delivered. */
  readonly verified: number
}

/** Sends `text` to the chat; `id` names the reply (a task id), so a retry of it sends nothing twice. */
export const sendReply = async (
  cairn: IntegrationContext,
  chatGuid: string,
  text: string,
  id: string = crypto.randomUUID()
): Promise<SendResult> => {
  const config = readConfig(await cairn.settings.all())
  const store = bridgeStore(cairn.store)
  const parts = splitText(text, config.maxMessageChars)
  const guids: Array<string | null> = []
  let skipped = 0
  let verified = 0
  for (const [index, part] of parts.entries()) {
    const tempGuid = `${TEMP_GUID_PREFIX}${id}-${index}`
    const already = await store.sentPart(tempGuid)
    if (already) {
      guids.push(already.guid)
      skipped += 1
      continue
    }
    // An earlier attempt began and was never seen to end (its process died mid-send or just
    // after): the chat is asked first, and a part it has is not sent again.
    const earlier = await store.attemptedAt(tempGuid)
    if (earlier !== undefined) {
      const check = await delivered(cairn, config, store, chatGuid, part, tempGuid, earlier)
      if (check === "unknown") {
        throw new UncertainDelivery(
          `An earlier send to ${chatGuid} may have arrived and the chat server cannot be asked; it is not sent again`
        )
      }
      if (check !== "absent") {
        await store.markSent(tempGuid, check.found.guid)
        guids.push(check.found.guid)
        skipped += 1
        continue
      }
    }
    await store.recordSend(chatGuid, part, tempGuid, config.echoWindowMs)
    const started = Date.now()
    try {
      const sent = await sendText(cairn, config, chatGuid, part, tempGuid)
      await store.markSent(tempGuid, sent?.guid ?? null)
      guids.push(sent?.guid ?? null)
    } catch (error) {
      if (error instanceof ChatServerError && error.unauthorized) throw error
      const check = await delivered(cairn, config, store, chatGuid, part, tempGuid, started)
      if (check === "absent") throw error
      if (check === "unknown") {
        // Sending again could show it twice: the delivery ends here, marked uncertain.
        throw new UncertainDelivery(
          `A send to ${chatGuid} failed (${
            error instanceof Error ? error.message : String(error)
          }) and the chat server could not be asked whether it arrived; it is not sent again`
        )
      }
      const found = check.found
      cairn.logger.warn(
        `Messaging bridge: a send to ${chatGuid} failed (${
          error instanceof Error ? error.message : String(error)
        }) but the chat server has it; not sending it again`
      )
      await store.markSent(tempGuid, found.guid)
      guids.push(found.guid)
      verified += 1
    }
  }
  return { parts: parts.length, guids, skipped, verified }
}
