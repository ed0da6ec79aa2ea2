/**
 * The SETUP manifest, checked and completed with the spec's defaults: sidebar titles default to the
 * id upper-cased, icons to `Plug` (unknown names too), items need a label and an href, env vars a
 * key. Pure functions; the loader turns a problem into a skipped part with a clear message.
 */
import { Data, Schema } from "effect"
import type { EnvVarSpec, IntegrationContext, SetupManifest } from "../sdk/index.ts"
import { type SettingKind, settingKinds, settingProblem, SettingType } from "../sdk/Settings.ts"

export const knownIcons: ReadonlySet<string> = new Set([
  "LayoutDashboard",
  "Columns",
  "BookOpen",
  "Brain",
  "HelpCircle",
  "Settings",
  "Zap",
  "Plug",
  "Bot",
  "Layers",
  "FileText",
  "Paperclip",
  "ClipboardList",
  "Key",
  "Shield",
  "ShieldCheck",
  "Activity",
  "Server",
  "Wrench",
  "BarChart3",
  "Users",
  "HardDrive",
  "Code2",
  "Hash",
  "Home",
  "MessageSquare",
  "Container",
  "Clock",
  "Heart",
  "Lock",
  "Sun",
  "Moon"
])

export const iconOrPlug = (icon: unknown): string => (typeof icon === "string" && knownIcons.has(icon) ? icon : "Plug")

export interface NormalizedEnvVar {
  readonly key: string
  readonly required: boolean
  readonly secret: boolean
  readonly description: string
  readonly default: string | undefined
  /** The setting's type: a saved value it cannot decode is refused. */
  readonly schema: Schema.Schema<unknown, string> | undefined
  /** The form's label (the key when the manifest gives none). */
  readonly label: string
  readonly type: SettingKind
  readonly choices: ReadonlyArray<string> | null
  readonly group: string | null
  readonly advanced: boolean
}

/** Test connection: what the integration's `check` found, or a throw saying why it failed. */
export type ConnectionCheck = (cairn: IntegrationContext, settings: Readonly<Record<string, string | undefined>>) => Promise<string>

export interface NormalizedSidebar {
  readonly id: string
  readonly title: string
  readonly icon: string
  readonly items: ReadonlyArray<{ readonly label: string; readonly href: string; readonly icon: string }>
  readonly readiness_endpoint: string | null
  readonly readiness_field: string | null
}

export interface NormalizedManifest {
  readonly env_vars: ReadonlyArray<NormalizedEnvVar>
  readonly webhook: { readonly path: string; readonly description: string } | null
  readonly sidebar_section: NormalizedSidebar | null
  readonly dashboard_modules: ReadonlyArray<
    { readonly id: string; readonly label: string; readonly icon: string; readonly description: string }
  >
  readonly activation: { readonly carapaces: ReadonlyArray<string>; readonly templates: ReadonlyArray<string> }
  readonly api_key_preset: string | null
  /** The route the chat header polls for the integration's status widget (HUD). */
  readonly hud: { readonly status_endpoint: string } | null
  /** Test connection, when the integration declares one. */
  readonly check: ConnectionCheck | null
}

export class ManifestError extends Data.TaggedError("ManifestError")<{ readonly message: string }> {}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value)
const text = (value: unknown) => (typeof value === "string" ? value : undefined)

const envVar = (raw: unknown, index: number): NormalizedEnvVar => {
  if (!isRecord(raw) || typeof raw.key !== "string" || !/^[A-Za-z_][A-Za-z0-9_]*$/.test(raw.key)) {
    throw new ManifestError({ message: `env_vars[${index}] needs a key made of letters, digits and '_'` })
  }
  const spec = raw as Partial<EnvVarSpec>
  const form = formOf(raw.key, spec)
  const schema = schemaOf(raw.key, spec.schema) ?? kindSchema(form.type, form.choices)
  const fallback = spec.default === undefined || spec.default === null ? undefined : String(spec.default)
  const wrongDefault = schema && fallback !== undefined ? settingProblem({ key: raw.key, schema }, fallback) : undefined
  if (wrongDefault) throw new ManifestError({ message: `env_vars: the default of ${wrongDefault}` })
  return {
    key: raw.key,
    required: spec.required === true,
    secret: spec.secret === true,
    description: text(spec.description) ?? "",
    default: fallback,
    schema,
    ...form
  }
}

/** How the form shows a setting: its label, control, choices, section and whether it is folded. */
const formOf = (key: string, spec: Partial<EnvVarSpec>) => {
  if (spec.type !== undefined && !settingKinds.includes(spec.type)) {
    throw new ManifestError({ message: `env_vars ${key}: type must be one of ${settingKinds.join(", ")}` })
  }
  const type: SettingKind = spec.type ?? (spec.secret === true ? "secret" : "string")
  const choices = Array.isArray(spec.choices) ? spec.choices.filter((c): c is string => typeof c === "string" && c !== "") : null
  if (type === "enum" && (choices === null || choices.length === 0)) {
    throw new ManifestError({ message: `env_vars ${key}: an enum needs its choices (a list of words)` })
  }
  return {
    label: text(spec.label)?.trim() || key,
    type,
    choices: type === "enum" ? choices : null,
    group: text(spec.group)?.trim() || null,
    advanced: spec.advanced === true
  }
}

/** Without a schema of its own, a setting's type still checks what is saved (the server's 422 names the key). */
const kindSchema = (type: SettingKind, choices: ReadonlyArray<string> | null): Schema.Schema<unknown, string> | undefined => {
  switch (type) {
    case "number":
      return Schema.compose(Schema.Trim, Schema.NumberFromString) as Schema.Schema<unknown, string>
    case "boolean":
      return SettingType.boolean as Schema.Schema<unknown, string>
    case "enum":
      return SettingType.choice(...(choices ?? [])) as Schema.Schema<unknown, string>
    case "url":
      return SettingType.url as Schema.Schema<unknown, string>
    case "list":
      return SettingType.list as unknown as Schema.Schema<unknown, string>
    default:
      return undefined
  }
}

const schemaOf = (key: string, schema: unknown): Schema.Schema<unknown, string> | undefined => {
  if (schema === undefined) return undefined
  if (!Schema.isSchema(schema)) throw new ManifestError({ message: `env_vars ${key}: schema must be an Effect Schema (see SettingType)` })
  return schema as Schema.Schema<unknown, string>
}

const sidebar = (raw: unknown): NormalizedSidebar => {
  if (!isRecord(raw)) throw new ManifestError({ message: "sidebar_section must be an object" })
  const id = text(raw.id)
  if (!id) throw new ManifestError({ message: "sidebar_section.id is required" })
  if (!Array.isArray(raw.items)) throw new ManifestError({ message: `sidebar_section ${id}: items is required (a list)` })
  const items = raw.items.map((item, index) => {
    if (!isRecord(item)) throw new ManifestError({ message: `sidebar_section ${id}: items[${index}] must be an object` })
    const label = text(item.label)
    const href = text(item.href)
    if (!label) throw new ManifestError({ message: `sidebar_section ${id}: items[${index}] needs a label` })
    if (!href) throw new ManifestError({ message: `sidebar_section ${id}: items[${index}] needs an href` })
    return { label, href, icon: iconOrPlug(item.icon) }
  })
  return {
    id,
    title: text(raw.title) ?? id.toUpperCase(),
    icon: iconOrPlug(raw.icon),
    items,
    readiness_endpoint: text(raw.readiness_endpoint) ?? null,
    readiness_field: text(raw.readiness_field) ?? null
  }
}

const checkOf = (check: unknown): ConnectionCheck | null => {
  if (check === undefined) return null
  if (typeof check !== "function") throw new ManifestError({ message: "check must be a function (cairn, settings) => Promise<string>" })
  return check as ConnectionCheck
}

/** Checks a manifest; throws a ManifestError naming the first problem. */
export const normalizeManifest = (raw: unknown): NormalizedManifest => {
  if (raw === undefined || raw === null) raw = {}
  if (!isRecord(raw)) throw new ManifestError({ message: "SETUP must be an object" })
  const manifest = raw as SetupManifest & Record<string, unknown>
  if (manifest.env_vars !== undefined && !Array.isArray(manifest.env_vars)) throw new ManifestError({ message: "env_vars must be a list" })
  const env_vars = (manifest.env_vars ?? []).map(envVar)
  const keys = new Set<string>()
  for (const spec of env_vars) {
    if (keys.has(spec.key)) throw new ManifestError({ message: `env_vars: ${spec.key} is declared twice` })
    keys.add(spec.key)
  }
  let webhook: NormalizedManifest["webhook"] = null
  if (manifest.webhook !== undefined) {
    if (!isRecord(manifest.webhook) || !text(manifest.webhook.path)) throw new ManifestError({ message: "webhook needs a path" })
    webhook = { path: text(manifest.webhook.path)!, description: text(manifest.webhook.description) ?? "" }
  }
  const dashboard_modules = (Array.isArray(manifest.dashboard_modules) ? manifest.dashboard_modules : []).map((module, index) => {
    if (!isRecord(module) || !text(module.id) || !text(module.label)) {
      throw new ManifestError({ message: `dashboard_modules[${index}] needs an id and a label` })
    }
    return { id: text(module.id)!, label: text(module.label)!, icon: iconOrPlug(module.icon), description: text(module.description) ?? "" }
  })
  let hud: NormalizedManifest["hud"] = null
  if (manifest.hud !== undefined) {
    const endpoint = isRecord(manifest.hud) ? text(manifest.hud.status_endpoint) : undefined
    if (!endpoint || !endpoint.startsWith("/") || endpoint.startsWith("//")) {
      throw new ManifestError({ message: "hud needs a status_endpoint: a path on this server, starting with /" })
    }
    hud = { status_endpoint: endpoint }
  }
  const activation = isRecord(manifest.activation) ? manifest.activation : {}
  const strings = (value: unknown) => (Array.isArray(value) ? value.filter((v): v is string => typeof v === "string") : [])
  return {
    env_vars,
    webhook,
    sidebar_section: manifest.sidebar_section === undefined ? null : sidebar(manifest.sidebar_section),
    dashboard_modules,
    activation: { carapaces: strings(activation.carapaces), templates: strings(activation.templates) },
    api_key_preset: text(manifest.api_key_preset) ?? null,
    hud,
    check: checkOf(manifest.check)
  }
}

/** Sidebar ids must be unique across integrations: the later duplicate is dropped with a reason. */
export const uniqueSidebars = (
  sections: ReadonlyArray<{ readonly integration: string; readonly section: NormalizedSidebar }>
): { readonly kept: Array<{ integration: string; section: NormalizedSidebar }>; readonly rejected: Array<string> } => {
  const seen = new Map<string, string>()
  const kept: Array<{ integration: string; section: NormalizedSidebar }> = []
  const rejected: Array<string> = []
  for (const entry of sections) {
    const owner = seen.get(entry.section.id)
    if (owner) {
      rejected.push(`${entry.integration}: sidebar_section id ${entry.section.id} is already used by ${owner}`)
      continue
    }
    seen.set(entry.section.id, entry.integration)
    kept.push({ ...entry })
  }
  return { kept, rejected }
}
