/**
 * What the integration keeps in its store: the events handled (an LRU of `<event id>:<phase>`, so a
 * redelivered message or a restart mid-burst never handles one twice), each channel's cool-down per
 * camera (a key that expires), and the counters the status shows.
 */
import type { IntegrationStore } from "../../src/sdk/index.ts"

export interface Counters {
  readonly received: number
  readonly invalid: number
  readonly ignored: number
  readonly duplicates: number
  readonly filtered: number
  readonly unbound: number
  readonly suppressed: number
  readonly tasks: number
  readonly errors: number
}

export interface Stats extends Counters {
  readonly last_event: { readonly id: string; readonly camera: string; readonly label: string; readonly at: string } | null
  readonly last_task: { readonly task_id: string; readonly channel_id: string; readonly event_id: string; readonly at: string } | null
  readonly last_error: string | null
}

export interface Connection {
  readonly connected: boolean
  readonly broker: string
  readonly topic: string
  readonly at: string
  readonly error: string | null
}

const empty: Stats = {
  received: 0,
  invalid: 0,
  ignored: 0,
  duplicates: 0,
  filtered: 0,
  unbound: 0,
  suppressed: 0,
  tasks: 0,
  errors: 0,
  last_event: null,
  last_task: null,
  last_error: null
}

/** Events remembered as handled: far more than a day of detections of a busy NVR. */
const eventCapacity = 50_000

export const frigateStore = (store: IntegrationStore) => {
  const handled = store.lru("events", eventCapacity)
  const cooldownKey = (channelId: string, camera: string) => `cooldown:${channelId}:${camera}`
  return {
    isHandled: (key: string) => handled.has(key),
    /** True when this call claimed the event (the first to). */
    claim: (key: string) => handled.add(key),
    release: (key: string) => handled.remove(key),
    cooling: async (channelId: string, camera: string) => (await store.get(cooldownKey(channelId, camera))) !== undefined,
    /** Starts a channel's cool-down for a camera; false when one runs already. */
    startCooldown: (channelId: string, camera: string, eventId: string, ms: number) =>
      ms <= 0
        ? Promise.resolve(true)
        : store.compareAndSet(cooldownKey(channelId, camera), undefined, { event_id: eventId, at: new Date().toISOString() }, {
          ttlMs: ms
        }),
    /** The worker's MQTT connection as it last saw it. */
    setConnection: (connection: Connection) => store.set("connection", connection),
    connection: () => store.get<Connection>("connection"),
    endCooldown: (channelId: string, camera: string) => store.delete(cooldownKey(channelId, camera)),
    stats: async (): Promise<Stats> => ({ ...empty, ...(await store.get<Partial<Stats>>("stats")) }),
    /** Adds to the counters (one worker writes them: it is a singleton). */
    count: async (changes: Partial<Counters>, extra: Partial<Pick<Stats, "last_event" | "last_task" | "last_error">> = {}) => {
      const current: Stats = { ...empty, ...(await store.get<Partial<Stats>>("stats")) }
      const next: Record<string, unknown> = { ...current, ...extra }
      for (const [name, add] of Object.entries(changes)) next[name] = (current[name as keyof Counters] ?? 0) + (add ?? 0)
      await store.set("stats", next)
      return next as unknown as Stats
    }
  }
}

export type FrigateStore = ReturnType<typeof frigateStore>
