/**
 * The listener: one across all server processes (a singleton worker), started once FRIGATE_MQTT_URL
 * resolves. It subscribes to Frigate's event topic and hands each message to the handler; a lost
 * connection fails the run, so the status shows the error and the supervisor reconnects with backoff.
 */
import { defineWorker } from "../../src/sdk/index.ts"
import { readConfig } from "./config.ts"
import { handleEvent } from "./handler.ts"
import { listen } from "./listener.ts"
import { frigateStore } from "./store.ts"

export default defineWorker({
  name: "events",
  description: "Subscribes to Frigate's MQTT events; a detection that passes the filters becomes a task in its bound channels",
  singleton: true,
  requiredSettings: ["FRIGATE_MQTT_URL"],
  run: async (cairn, worker) => {
    const read = readConfig(worker.settings)
    if (!read.ok) throw new Error(read.error)
    const config = read.config
    const store = frigateStore(cairn.store)
    const connection = (connected: boolean, error: string | null) =>
      store.setConnection({ connected, broker: config.mqttUrl, topic: config.topic, at: new Date().toISOString(), error })
    const listener = await listen(
      config,
      async (payload) => {
        const outcome = await handleEvent(cairn, config, store, payload, worker.signal)
        worker.report({ connected: true, last_outcome: outcome, ...(await store.stats()) })
      },
      () => {
        cairn.logger.info(`Frigate: subscribed to ${config.topic} on ${config.mqttUrl}`)
        worker.report({ connected: true })
        void connection(true, null)
      }
    )
    const stop = () => void listener.stop()
    worker.signal.addEventListener("abort", stop, { once: true })
    if (worker.signal.aborted) stop()
    try {
      await listener.done
    } catch (error) {
      const why = error instanceof Error ? error.message : String(error)
      await store.count({ errors: 1 }, { last_error: why }).catch(() => undefined)
      await connection(false, why).catch(() => undefined)
      throw error
    } finally {
      worker.signal.removeEventListener("abort", stop)
    }
  }
})
