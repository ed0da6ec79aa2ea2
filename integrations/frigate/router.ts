/** The Frigate routes: the listener's status and counters, and a diagnosis of the setup. */
import { defineRoutes } from "../../src/sdk/index.ts"
import { diagnose, status } from "./status.ts"

export default defineRoutes([
  {
    method: "GET",
    path: "/status",
    description: "The MQTT subscription, the filters and the counts of events received, filtered, suppressed and turned into tasks",
    scope: "operations:read",
    handler: async (_request, cairn) => status(cairn)
  },
  {
    method: "GET",
    path: "/diagnose",
    description: "Checks the metadata, the settings, the broker subscription, Frigate's HTTP API and the channel bindings",
    scope: "operations:read",
    handler: async (_request, cairn) => diagnose(cairn)
  }
])
