import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Authentication } from "../auth/Authentication.ts"
import { RequiredScope } from "../auth/RequiredScope.ts"
import { detailBody } from "../contract/Errors.ts"
import { body, pathParams } from "../contract/Params.ts"
import { EffectClass } from "../contract/ToolSchemas.ts"
import { IntegrationNotFound, NoConnectionCheck, ToolNotFound } from "./Errors.ts"

const Json = Schema.Record({ key: Schema.String, value: Schema.Unknown })
const idPath = pathParams({ id: Schema.String })

export class WorkerStatusView extends Schema.Class<WorkerStatusView>("IntegrationWorkerStatus")({
  name: Schema.String,
  description: Schema.String,
  singleton: Schema.Boolean,
  state: Schema.Literal("waiting_for_settings", "starting", "running", "backing_off", "leader_elsewhere", "finished", "stopped"),
  required_settings: Schema.Array(Schema.String),
  missing_settings: Schema.Array(Schema.String),
  restarts: Schema.Number,
  last_error: Schema.NullOr(Schema.Struct({ message: Schema.String, at: Schema.String })),
  next_attempt_at: Schema.NullOr(Schema.String),
  started_at: Schema.NullOr(Schema.String),
  detail: Json,
  /** Whether it reports its contacts (until its first, the integration is connecting). */
  connects: Schema.Boolean,
  /** Its last real contact: a login, a ping, a call. */
  contact: Schema.NullOr(
    Schema.Struct({ state: Schema.Literal("connected", "failing", "paused"), reason: Schema.NullOr(Schema.String), at: Schema.String })
  ),
  /** When the failures it is in began; null once a contact succeeds. */
  failing_since: Schema.NullOr(Schema.String)
}) {}

/** An integration's status from its own last real contact (see docs/integrations.md, "Status"). */
export class IntegrationHealth extends Schema.Class<IntegrationHealth>("IntegrationHealth")({
  state: Schema.Literal("not_configured", "connecting", "connected", "failing", "paused"),
  reason: Schema.NullOr(Schema.String),
  since: Schema.NullOr(Schema.String),
  last_contact_at: Schema.NullOr(Schema.String),
  /** The state in words, as the console, the CLI and the HUD show it: `failing: <reason>, since <when>`. */
  words: Schema.String
}) {}

export class IntegrationSummary extends Schema.Class<IntegrationSummary>("IntegrationSummary")({
  id: Schema.String,
  name: Schema.String,
  version: Schema.NullOr(Schema.String),
  /** Its configuration: whether the required settings resolve (`failed`: it did not load). */
  status: Schema.Literal("ready", "partial", "not_configured", "failed"),
  /** Whether it works: from its workers' last real contact. */
  health: IntegrationHealth,
  /** The required settings that resolve to nothing (why it is partial or not configured). */
  missing_settings: Schema.Array(Schema.String),
  parts: Schema.Array(Schema.String),
  error: Schema.NullOr(Schema.String),
  dir: Schema.String,
  overrides: Schema.Array(Schema.String),
  metadata: Schema.NullOr(Schema.Struct({ integration_type: Schema.String, client_id_prefix: Schema.String })),
  /** Its workers in this server process (a singleton led elsewhere shows `leader_elsewhere`). */
  workers: Schema.Array(WorkerStatusView),
  /** The manifest's `webhook`: a path on this server (a `<SETTING>` in it stands for a secret to fill in). */
  webhook: Schema.NullOr(Schema.Struct({ path: Schema.String, description: Schema.String })),
  /** The manifest's `dashboard_modules` (icons completed with `Plug`). */
  dashboard_modules: Schema.Array(
    Schema.Struct({ id: Schema.String, label: Schema.String, icon: Schema.String, description: Schema.String })
  ),
  /** The manifest's `hud`: the route a chat header polls for the integration's status widget. */
  hud: Schema.NullOr(Schema.Struct({ status_endpoint: Schema.String }))
}) {}

/** An integration's `sidebar_section`, completed with the spec's defaults (title, `Plug` icons). */
export class SidebarSectionView extends Schema.Class<SidebarSectionView>("IntegrationSidebarSection")({
  integration_id: Schema.String,
  id: Schema.String,
  title: Schema.String,
  icon: Schema.String,
  items: Schema.Array(Schema.Struct({ label: Schema.String, href: Schema.String, icon: Schema.String })),
  readiness_endpoint: Schema.NullOr(Schema.String),
  readiness_field: Schema.NullOr(Schema.String)
}) {}

export class SettingView extends Schema.Class<SettingView>("IntegrationSettingView")({
  key: Schema.String,
  value: Schema.NullOr(Schema.String),
  is_set: Schema.Boolean,
  source: Schema.Literal("stored", "environment", "default", "unset"),
  secret: Schema.Boolean,
  required: Schema.Boolean,
  description: Schema.String,
  /** The manifest's default (masked for a secret), or null. */
  default: Schema.NullOr(Schema.String),
  /** The form's label (the key when the manifest gives none). */
  label: Schema.String,
  /** The form's control. */
  type: Schema.Literal("string", "secret", "number", "boolean", "enum", "url", "list"),
  /** An enum's choices, else null. */
  choices: Schema.NullOr(Schema.Array(Schema.String)),
  /** The form's section (null: the first, unnamed). */
  group: Schema.NullOr(Schema.String),
  /** Folded away until asked for. */
  advanced: Schema.Boolean
}) {}

export class IntegrationSettingsView extends Schema.Class<IntegrationSettingsView>("IntegrationSettingsView")({
  integration_id: Schema.String,
  status: Schema.Literal("ready", "partial", "not_configured"),
  settings: Schema.Array(SettingView),
  /** The integration declares a connection check (`POST …/settings/test`). */
  can_test: Schema.Boolean
}) {}

/** What Test connection found: `ok` with what it saw, or why it failed. */
export class ConnectionTestResult extends Schema.Class<ConnectionTestResult>("ConnectionTestResult")({
  ok: Schema.Boolean,
  message: Schema.String,
  duration_ms: Schema.Number
}) {}

/** A tool as companion clients read it (`tool_name`, `source_integration`) and as it was (`name`, `source`). */
export class ToolView extends Schema.Class<ToolView>("ToolView")({
  tool_name: Schema.String,
  name: Schema.String,
  description: Schema.String,
  parameters: Json,
  /** The integration that registered it; null for a core tool. */
  source_integration: Schema.NullOr(Schema.String),
  source: Schema.String,
  effect: EffectClass
}) {}

export class ToolResult extends Schema.Class<ToolResult>("ToolResult")({
  name: Schema.String,
  result: Schema.String,
  is_error: Schema.Boolean,
  /** The failure's message when `is_error`, else null. */
  error: Schema.NullOr(Schema.String),
  duration_ms: Schema.Number
}) {}

export class IntegrationsApi extends HttpApiGroup.make("integrations")
  .add(
    HttpApiEndpoint.get("list", "/api/v1/admin/integrations")
      .addSuccess(Schema.Struct({ integrations: Schema.Array(IntegrationSummary) }))
      .annotate(RequiredScope, "settings:read")
      .annotate(OpenApi.Description, "Integrations found at startup: parts, configuration status, load errors")
  )
  .add(
    HttpApiEndpoint.get("sidebar", "/api/v1/admin/integrations/sidebar-sections")
      .addSuccess(Schema.Struct({ sections: Schema.Array(SidebarSectionView) }))
      .annotate(RequiredScope, "settings:read")
      .annotate(OpenApi.Description, "The sidebar sections declared by integrations")
  )
  .add(
    HttpApiEndpoint.get("getSettings", "/api/v1/admin/integrations/:id/settings")
      .setPath(idPath)
      .addSuccess(IntegrationSettingsView)
      .annotate(RequiredScope, "settings:read")
      .annotate(OpenApi.Description, "An integration's settings; secrets are masked")
  )
  .add(
    HttpApiEndpoint.put("putSettings", "/api/v1/admin/integrations/:id/settings")
      .setPath(idPath)
      .setPayload(Json)
      .addSuccess(IntegrationSettingsView)
      .annotate(RequiredScope, "settings:write")
      .annotate(OpenApi.Description, "Store settings (null or \"\" forgets one; a masked secret sent back is kept)")
  )
  .add(
    HttpApiEndpoint.post("testSettings", "/api/v1/admin/integrations/:id/settings/test")
      .setPath(idPath)
      .setPayload(Json)
      .addSuccess(ConnectionTestResult)
      .addError(detailBody(NoConnectionCheck))
      .annotate(RequiredScope, "settings:write")
      .annotate(
        OpenApi.Description,
        "Test connection: try the settings as given over the saved ones (a masked secret is the saved one; nothing is stored). 422 names a wrong value's key; 409 when the integration declares no check"
      )
  )
  .add(
    HttpApiEndpoint.get("process", "/api/v1/admin/integrations/:id/process")
      .setPath(idPath)
      .addSuccess(Schema.Unknown)
      .annotate(RequiredScope, "settings:read")
      .annotate(OpenApi.Description, "The state of an integration's background process")
  )
  .add(
    HttpApiEndpoint.get("workers", "/api/v1/admin/integrations/:id/workers")
      .setPath(idPath)
      .addSuccess(Schema.Struct({ integration_id: Schema.String, workers: Schema.Array(WorkerStatusView) }))
      .annotate(RequiredScope, "settings:read")
      .annotate(
        OpenApi.Description,
        "The state of an integration's workers in this server process: running, waiting for settings, backing off (with the last error), leader elsewhere"
      )
  )
  .add(
    HttpApiEndpoint.get("tools", "/api/v1/admin/tools")
      .addSuccess(Schema.Array(ToolView))
      .annotate(RequiredScope, "tools:read")
      .annotate(OpenApi.Description, "Every tool bots can be given, core and from integrations")
  )
  .add(
    HttpApiEndpoint.post("execute", "/api/v1/admin/tools/:name/execute")
      .setPath(pathParams({ name: Schema.String }))
      .setPayload(
        body({
          arguments: Schema.optionalWith(Json, { default: () => ({}) }),
          bot_id: Schema.optionalWith(Schema.String, { default: () => "default" }),
          session_id: Schema.optional(Schema.String),
          channel_id: Schema.optional(Schema.String)
        })
      )
      .addSuccess(ToolResult)
      .annotate(RequiredScope, "tools:execute")
      .annotate(OpenApi.Description, "Run a tool directly with the given arguments")
  )
  .addError(detailBody(IntegrationNotFound))
  .addError(detailBody(ToolNotFound))
  .middleware(Authentication)
  .annotate(OpenApi.Title, "Integrations and tools")
{}
