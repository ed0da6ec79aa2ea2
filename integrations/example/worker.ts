/**
 * A worker: every EXAMPLE_SNAPSHOT_INTERVAL_MS it stores a snapshot of what the hook counted in the
 * integration's store (the latest under `snapshot:latest`, the last 24 times in an LRU set) and
 * reports it, so it shows in the admin status (`GET /api/v1/admin/integrations/example/workers`).
 */
import { defineWorker, readSettings } from "../../src/sdk/index.ts"
import { SETUP } from "./setup.ts"
import { stats } from "./stats.ts"

export default defineWorker({
  name: "stats-snapshot",
  description: "Stores a snapshot of the responses the hook has seen, periodically",
  requiredSettings: ["EXAMPLE_SNAPSHOT_INTERVAL_MS"],
  run: async (cairn, worker) => {
    const settings = readSettings(SETUP, worker.settings)
    // A wrong value can only come from the environment (a saved one was checked): the worker fails, showing why.
    if (!settings.ok) throw new Error(settings.error)
    const interval = settings.values.EXAMPLE_SNAPSHOT_INTERVAL_MS
    const recent = cairn.store.lru("snapshot-times", 24)
    do {
      const snapshot = { at: new Date().toISOString(), responses_seen: stats.responsesSeen }
      await cairn.store.set("snapshot:latest", snapshot)
      await recent.add(snapshot.at)
      worker.report({ last_snapshot_at: snapshot.at, responses_seen: snapshot.responses_seen })
    } while (await worker.sleep(interval))
  }
})
