/**
 * The `msgbridge` dispatcher: run results, task results and heartbeats go to the chat named by
 * `chat_guid` in the dispatch config, whether or not anything ever came in from it.
 */
import { defineDispatchers } from "../../src/sdk/index.ts"
import { sendReply } from "./outbound.ts"
import { registered } from "./state.ts"

const chatOf = (config: Record<string, unknown>) => {
  const chat = config.chat_guid
  if (typeof chat !== "string" || chat === "") throw new Error("dispatch_config.chat_guid is required for the msgbridge dispatcher")
  return chat
}

export default defineDispatchers((cairn) => {
  cairn.registerDispatcher("msgbridge", {
    // Client actions and extra metadata have no place in a text message; they are accepted and not sent.
    deliver: async (task, result, _clientActions, _extraMetadata) => {
      if (!result.trim()) return
      await sendReply(cairn, chatOf(task.dispatch_config), result, task.id)
    },
    postMessage: async (config, text, options) => {
      try {
        // A chat shows no sender name per message: one posted as someone else (a delegated bot) says who.
        await sendReply(cairn, chatOf(config), options.username ? `${options.username}: ${text}` : text)
        return true
      } catch (error) {
        cairn.logger.warn(
          `Messaging bridge: a message to ${String(config.chat_guid)} was not sent: ${
            error instanceof Error ? error.message : String(error)
          }`
        )
        return false
      }
    }
  })
  registered.dispatcher = true
})
