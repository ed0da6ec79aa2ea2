import { defineSetup, SettingType } from "../../src/sdk/index.ts"

export const SETUP = defineSetup({
  env_vars: [
    { key: "EXAMPLE_GREETING", label: "Greeting", group: "Behaviour", description: "How the ping route greets", default: "Hello" },
    {
      key: "EXAMPLE_API_TOKEN",
      label: "API token",
      type: "secret",
      group: "Behaviour",
      description: "A token for a remote service (shows how secrets are masked)",
      secret: true
    },
    {
      key: "EXAMPLE_SNAPSHOT_INTERVAL_MS",
      label: "Snapshot every (ms)",
      type: "number",
      group: "Behaviour",
      advanced: true,
      description: "How often the stats-snapshot worker stores a snapshot",
      default: "60000",
      schema: SettingType.integer({ min: 100 })
    }
  ],
  sidebar_section: {
    id: "example",
    title: "Example",
    icon: "Zap",
    items: [
      { label: "Ping", href: "/integrations/example/ping", icon: "Activity" },
      { label: "Stats", href: "/integrations/example/stats" }
    ],
    readiness_endpoint: "/integrations/example/ping",
    readiness_field: "status"
  },
  dashboard_modules: [{ id: "example-stats", label: "Example stats", icon: "BarChart3", description: "Responses seen" }]
})
