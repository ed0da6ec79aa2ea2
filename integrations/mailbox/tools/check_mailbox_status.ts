import { defineTool } from "../../../src/sdk/index.ts"
import { checkConnection } from "../poller.ts"
import { cairnContext } from "../state.ts"

export default defineTool({
  schema: {
    type: "function",
    function: {
      name: "check_mailbox_status",
      description: "Tests the mailbox's IMAP connection now and reports the address, the folder count and any error",
      parameters: { type: "object", properties: {} }
    }
  },
  timeoutMs: 30_000,
  effect: "read",
  execute: async () => JSON.stringify(await checkConnection(await cairnContext().settings.all()))
})
