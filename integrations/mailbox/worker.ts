/**
 * The poller: one across all server processes (a singleton worker), started about 5 s after the
 * server once MAILBOX_EMAIL and MAILBOX_APP_PASSWORD resolve, polling every MAILBOX_POLL_INTERVAL.
 * A cycle that cannot reach or log in to the server fails the worker, so the admin status shows the
 * error and the supervisor retries with backoff; a failing mail only stops its folder for a cycle.
 */
import { defineWorker } from "../../src/sdk/index.ts"
import { readConfig } from "./config.ts"
import { pollOnce } from "./poller.ts"

export default defineWorker({
  name: "poller",
  description: "Polls the mailbox over IMAP, screens each mail, delivers or quarantines it",
  singleton: true,
  connects: true,
  requiredSettings: ["MAILBOX_EMAIL", "MAILBOX_APP_PASSWORD"],
  run: async (cairn, worker) => {
    const read = readConfig(worker.settings)
    if (!read.ok) throw new Error(read.error)
    if (!(await worker.sleep(read.config.startDelayMs))) return
    do {
      const result = await pollOnce(cairn, worker.settings)
      worker.report({ last_poll_at: new Date().toISOString(), ...result.counts, error: result.error, auth_failed: result.auth_failed })
      // Its status is this login's outcome: failing with the reason, or connected.
      worker.contact(result.error ? "failing" : "connected", result.error ?? undefined)
      if (result.error) throw new Error(result.error)
    } while (await worker.sleep(read.config.pollIntervalMs))
  }
})
