import { defineTool } from "../../../src/sdk/index.ts"
import { cairnContext } from "../state.ts"

export default defineTool({
  schema: {
    type: "function",
    function: {
      name: "mission_control_dashboard",
      description:
        "Reads mission control's dashboard: every channel with its last activity, the agent runs in progress, queued and failed tasks, open todos, upcoming heartbeats and the integrations' status.",
      parameters: { type: "object", properties: {} }
    }
  },
  effect: "read",
  execute: async () => JSON.stringify(await cairnContext().overview())
})
