import { defineTool } from "../../../src/sdk/index.ts"
import { pollOnce } from "../poller.ts"
import { cairnContext } from "../state.ts"

export default defineTool({
  schema: {
    type: "function",
    function: {
      name: "trigger_mailbox_poll",
      description: "Runs one mailbox poll now and reports what was fetched, delivered and quarantined",
      parameters: { type: "object", properties: {} }
    }
  },
  timeoutMs: 300_000,
  effect: "write",
  execute: async () => {
    const cairn = cairnContext()
    const result = await pollOnce(cairn, await cairn.settings.all())
    return JSON.stringify({
      counts: result.counts,
      error: result.error,
      items: result.items.map((item) => ({
        folder: item.folder,
        subject: item.subject,
        outcome: item.outcome,
        files: item.delivered_to?.map((d) => d.path)
      }))
    })
  }
})
