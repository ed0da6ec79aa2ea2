/**
 * The resume worker (one across all server processes): deliveries the ledger holds undecided — the
 * process stopped between recording one and queueing its task, or queueing failed — are decided
 * again from what was recorded with them, each attempt counted, until decided or a dead letter
 * (INBOUND_MAX_ATTEMPTS). A delivery younger than a few seconds is the webhook's own.
 */
import { defineWorker } from "../../src/sdk/index.ts"
import { decideDelivery } from "./webhook.ts"

const EVERY_MS = 60_000
const WEBHOOK_OWNS_MS = 30_000

export default defineWorker({
  name: "resume",
  description: "Decides webhook deliveries recorded and not decided (a restart, a failed attempt) until each is decided or a dead letter",
  singleton: true,
  requiredSettings: ["GITHUB_WEBHOOK_SECRET"],
  run: async (cairn, worker) => {
    do {
      const open = await cairn.inbound.open({ limit: 100 })
      const due = open.filter((entry) => Date.now() - Date.parse(entry.received_at) >= WEBHOOK_OWNS_MS)
      for (const entry of due) {
        if (worker.signal.aborted) return
        const result = await decideDelivery(cairn, entry)
        if (result.status !== "failed") cairn.logger.info(`GitHub: delivery ${entry.external_id} resumed: ${result.status}`)
      }
      worker.report({ last_pass_at: new Date().toISOString(), open: open.length, resumed: due.length })
    } while (await worker.sleep(EVERY_MS))
  }
})
