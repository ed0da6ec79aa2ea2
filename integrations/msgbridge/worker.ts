/**
 * The bridge's health and catch-up loop (one across all server processes): pings the chat server
 * every MSGBRIDGE_HEALTH_INTERVAL_SECONDS, records what it saw for the HUD, and catches up at start
 * and whenever the server answers again after it did not.
 */
import { defineWorker } from "../../src/sdk/index.ts"
import { catchUp } from "./catchup.ts"
import { ping } from "./chatServer.ts"
import { readConfig } from "./config.ts"
import { bridgeStore } from "./store.ts"

export default defineWorker({
  name: "health",
  description: "Pings the chat server and catches up on messages missed while it or Cairn was away",
  singleton: true,
  connects: true,
  requiredSettings: ["MSGBRIDGE_SERVER_URL", "MSGBRIDGE_PASSWORD"],
  run: async (cairn, worker) => {
    const config = readConfig(worker.settings)
    const store = bridgeStore(cairn.store)
    let wasUp = false
    do {
      try {
        await ping(cairn, config)
        if (!wasUp) {
          const result = await catchUp(cairn)
          worker.report({ last_catch_up_at: new Date().toISOString(), ...result })
        }
        wasUp = true
        await store.setHealth({ state: "up", at: new Date().toISOString(), error: null })
        // Its status is this ping's outcome (paused: someone paused the bridge on purpose).
        if (await store.paused()) worker.contact("paused", "paused from the HUD or POST /integrations/msgbridge/pause")
        else worker.contact("connected")
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error)
        if (wasUp) cairn.logger.warn(`Messaging bridge: the chat server stopped answering: ${message}`)
        wasUp = false
        await store.setHealth({ state: "down", at: new Date().toISOString(), error: message })
        worker.report({ error: message })
        worker.contact("failing", message)
      }
    } while (await worker.sleep(config.healthIntervalMs))
  }
})
