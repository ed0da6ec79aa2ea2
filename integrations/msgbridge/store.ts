/**
 * The bridge's state in the integration store (shared by every server process, kept across
 * restarts):
 *   guids (LRU set, 5,000)        message GUIDs seen, and those the bridge sent itself (the outbound
 *                                 check reads it; which message was decided how is the inbound
 *                                 ledger's, `cairn.inbound`)
 *   state:paused                  true while paused
 *   cursor                        {date}: the newest handled message's dateCreated (catch-up starts there)
 *   echo:temp:<tempGuid>          a send in flight or just done (echo window)
 *   echo:text:<hash>              a sent text in a chat (echo window)
 *   sent:<tempGuid>               {guid}: a part of a reply that reached the chat server (7 days)
 *   attempt:<tempGuid>            {at}: a send of that part began (7 days): a process that died
 *                                 before `sent:` was written left it, and the next asks the chat
 *   ignored:<guid>                {reason}: written by releases before the inbound ledger (a
 *                                 message left alone at arrival); still read, so it stays final
 *   breaker:<chat guid>           {start, count, open_until}: the chat's reply circuit breaker
 *   health                        {state, at, error}: the last ping, as the worker saw it
 */
import * as crypto from "node:crypto"
import type { IntegrationStore, StoreWriteOptions } from "../../src/sdk/index.ts"

export const DEDUP_CAPACITY = 5000
const SENT_TTL_MS = 7 * 24 * 3_600_000

export const TEMP_GUID_PREFIX = "cairn-"

const textKey = (chatGuid: string, text: string) =>
  `echo:text:${crypto.createHash("sha256").update(`${chatGuid}\n${text.trim().replace(/\s+/g, " ")}`).digest("hex").slice(0, 32)}`

export interface Health {
  readonly state: "up" | "down"
  readonly at: string
  readonly error: string | null
}

interface Breaker {
  readonly start: number
  readonly count: number
  readonly open_until: number | null
}

export const bridgeStore = (store: IntegrationStore) => {
  const guids = store.lru("guids", DEDUP_CAPACITY)
  /**
   * Writes `step(current)` by compare-and-set, reading again when another writer got there first
   * (a few tries); `step` answering undefined leaves the value as it is. Answers what was written.
   */
  const update = async <T>(
    key: string,
    step: (current: T | undefined) => T | undefined,
    options?: StoreWriteOptions
  ): Promise<T | undefined> => {
    for (let attempt = 0; attempt < 5; attempt++) {
      const current = await store.get<T>(key)
      const next = step(current)
      if (next === undefined) return undefined
      if (await store.compareAndSet(key, current, next, options)) return next
    }
    return undefined
  }
  return {
    /** True when the GUID is new (it is now claimed); false for one seen before. */
    claim: (guid: string) => guids.add(guid),
    release: (guid: string) => guids.remove(guid),
    seen: (guid: string) => guids.has(guid),
    paused: async () => (await store.get<boolean>("state:paused")) === true,
    setPaused: (paused: boolean) => store.set("state:paused", paused),
    cursor: async () => (await store.get<{ date: number }>("cursor"))?.date,
    /** Moves the cursor forward to `date` (never back, whoever else writes it). */
    advanceCursor: async (date: number) => {
      await update<{ date: number }>("cursor", (current) => (current && current.date >= date ? undefined : { date }))
    },
    /** Recorded before a send goes out, so its echo is recognised however fast it comes back. */
    recordSend: async (chatGuid: string, text: string, tempGuid: string, windowMs: number) => {
      await Promise.all([
        store.set(`attempt:${tempGuid}`, { at: Date.now() }, { ttlMs: SENT_TTL_MS }),
        store.set(`echo:temp:${tempGuid}`, true, { ttlMs: windowMs }),
        store.set(textKey(chatGuid, text), true, { ttlMs: windowMs }),
        guids.add(tempGuid)
      ])
    },
    isEcho: async (chatGuid: string, text: string, tempGuid: string | null | undefined) => {
      if (tempGuid && (tempGuid.startsWith(TEMP_GUID_PREFIX) || (await store.get(`echo:temp:${tempGuid}`)) !== undefined)) return true
      return text.trim() !== "" && (await store.get(textKey(chatGuid, text))) !== undefined
    },
    /** Records that the message was left alone on arrival for `reason`; it stays so. */
    markIgnored: (guid: string, reason: string, catchUpMaxAgeMs: number) =>
      store.set(`ignored:${guid}`, { reason }, { ttlMs: Math.max(SENT_TTL_MS, 2 * catchUpMaxAgeMs) }),
    /** Why the message was left alone on arrival, if it was. */
    ignoredAs: async (guid: string) => (await store.get<{ reason: string }>(`ignored:${guid}`))?.reason,
    sentPart: (tempGuid: string) => store.get<{ guid: string | null }>(`sent:${tempGuid}`),
    /** When a send of this part began, if one did (whether or not it was seen to end). */
    attemptedAt: async (tempGuid: string) => (await store.get<{ at: number }>(`attempt:${tempGuid}`))?.at,
    markSent: async (tempGuid: string, guid: string | null) => {
      await store.set(`sent:${tempGuid}`, { guid }, { ttlMs: SENT_TTL_MS })
      if (guid) await guids.add(guid)
    },
    /** Counts a run for the chat; false when its breaker is open (too many runs in the window). */
    allowRun: async (chatGuid: string, limit: number, windowMs: number, now = Date.now()): Promise<boolean> => {
      let open = false
      const written = await update<Breaker>(
        `breaker:${chatGuid}`,
        (current) => {
          open = current?.open_until != null && current.open_until > now
          if (open) return undefined
          const fresh = !current || now - current.start >= windowMs || current.open_until !== null
          const count = fresh ? 1 : current.count + 1
          return count > limit
            ? { start: now, count, open_until: now + windowMs }
            : { start: fresh ? now : current!.start, count, open_until: null }
        },
        { ttlMs: windowMs * 4 }
      )
      if (open) return false
      return written === undefined || written.open_until === null
    },
    health: () => store.get<Health>("health"),
    setHealth: (health: Health) => store.set("health", health)
  }
}

export type BridgeStore = ReturnType<typeof bridgeStore>
