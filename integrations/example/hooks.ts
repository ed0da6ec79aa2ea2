import { defineHooks } from "../../src/sdk/index.ts"
import { stats } from "./stats.ts"

export default defineHooks((cairn) => {
  cairn.registerMetadata({
    integration_type: "example",
    client_id_prefix: "example:",
    user_attribution: (userId) => ({ username: `example user ${userId}` })
  })
  cairn.registerHook("after_response", (context) => {
    stats.responsesSeen += 1
    cairn.logger.debug("a bot answered", { bot_id: context.bot_id, length: context.extra.response_length })
  })
})
