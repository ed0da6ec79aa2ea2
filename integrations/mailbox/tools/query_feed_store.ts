import { defineTool } from "../../../src/sdk/index.ts"
import { feedStore } from "../feed.ts"
import { summaryOf } from "../quarantine.ts"
import { cairnContext } from "../state.ts"

export default defineTool({
  schema: {
    type: "function",
    function: {
      name: "query_feed_store",
      description:
        "Reads the mailbox feed store: stats (decisions by outcome), recent (the latest decisions), quarantine (quarantined mails, headers only), sources (senders and their counts)",
      parameters: {
        type: "object",
        properties: {
          action: { type: "string", enum: ["stats", "recent", "quarantine", "sources"] },
          store: { type: "string", description: "The feed store; only `mailbox` exists" },
          source: { type: "string", description: "Only entries whose sender contains this" },
          limit: { type: "integer", minimum: 1, maximum: 200 }
        },
        required: ["action"]
      }
    }
  },
  effect: "read",
  execute: async (args) => {
    const feed = feedStore(cairnContext().store)
    const limit = Math.min(200, Math.max(1, Number(args.limit) || 20))
    const source = typeof args.source === "string" ? args.source.toLowerCase() : undefined
    if (args.store !== undefined && args.store !== "mailbox") {
      return JSON.stringify({ error: `Unknown store ${args.store}; the only store is mailbox` })
    }
    const audit = await feed.audit(1000)
    const records = (await Promise.all([...new Set(audit.map((entry) => entry.key))].map((key) => feed.record(key)))).filter((r) =>
      r !== undefined
    )
    const matching = records.filter((r) => !source || r.from.toLowerCase().includes(source))
    switch (args.action) {
      case "stats": {
        const byStatus: Record<string, number> = {}
        for (const r of matching) byStatus[r.status] = (byStatus[r.status] ?? 0) + 1
        return JSON.stringify({ mails: matching.length, by_status: byStatus, last_poll: (await feed.pollState()) ?? null })
      }
      case "recent":
        return JSON.stringify(audit.filter((e) => !source || matching.some((r) => r.key === e.key)).slice(0, limit))
      case "quarantine":
        return JSON.stringify(
          (await feed.quarantined()).filter((r) => !source || r.from.toLowerCase().includes(source)).slice(0, limit).map(summaryOf)
        )
      case "sources": {
        const counts = new Map<string, number>()
        for (const r of matching) counts.set(r.from, (counts.get(r.from) ?? 0) + 1)
        return JSON.stringify([...counts].sort((a, b) => b[1] - a[1]).slice(0, limit).map(([from, mails]) => ({ from, mails })))
      }
      default:
        return JSON.stringify({ error: "action must be stats, recent, quarantine or sources" })
    }
  }
})
