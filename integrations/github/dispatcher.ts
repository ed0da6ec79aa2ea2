/**
 * The `github` dispatcher: a task's answer becomes a comment on the pull request or issue named by
 * its dispatch config (`repository`, `number`), once per delivery (`delivery_id`) however often the
 * delivery is retried.
 */
import { defineDispatchers } from "../../src/sdk/index.ts"
import { postComment, targetOf } from "./comments.ts"
import { registered } from "./state.ts"

export default defineDispatchers((cairn) => {
  cairn.registerDispatcher("github", {
    // Client actions and extra metadata have no place in a comment; they are accepted and not sent.
    deliver: async (task, result, _clientActions, _extraMetadata) => {
      if (task.status !== "complete") {
        cairn.logger.warn(`GitHub: task ${task.id} failed, nothing is posted: ${task.error ?? "no error given"}`)
        return
      }
      if (!result.trim()) return
      const target = targetOf(task.dispatch_config)
      const delivery = task.dispatch_config.delivery_id
      const outcome = await postComment(cairn, target, result, typeof delivery === "string" && delivery ? delivery : `task-${task.id}`)
      if (!outcome.posted) {
        cairn.logger.info(`GitHub: the answer of task ${task.id} was already posted on ${target.repository}#${target.number}`)
      }
    },
    postMessage: async (config, text, _options) => {
      try {
        await postComment(cairn, targetOf(config), text)
        return true
      } catch (error) {
        cairn.logger.warn(
          `GitHub: a message to ${String(config.repository)}#${String(config.number)} was not posted: ${
            error instanceof Error ? error.message : String(error)
          }`
        )
        return false
      }
    }
  })
  registered.dispatcher = true
})
