/**
 * The scope catalogue of the spec: every scope a key can hold, its group and what it grants, the
 * implications between them, and the presets the admin UI offers.
 */
import { Record as Records, Schema } from "effect"

export interface ScopeDefinition<Name extends string = string> {
  readonly name: Name
  readonly description: string
}

export interface ScopeGroup {
  readonly name: string
  readonly scopes: ReadonlyArray<ScopeDefinition>
}

/** Keeps the literal name, so `Scope` below is the union of the names declared here. */
const scope = <const Name extends string>(name: Name, description: string): ScopeDefinition<Name> => ({ name, description })

/** The one declaration of the scopes; `Scope` and every list below derive from it. */
export const scopeGroups = [
  { name: "Admin", scopes: [scope("admin", "Full access; bypasses every scope check")] },
  {
    name: "Channels",
    scopes: [
      scope("channels:read", "List and read channels"),
      scope("channels:write", "Create, update and delete channels; implies every channels.*:write scope")
    ]
  },
  {
    name: "Channels granular",
    scopes: [
      scope("channels.messages:read", "Read a channel's messages"),
      scope("channels.messages:write", "Post messages into a channel"),
      scope("channels.config:read", "Read a channel's configuration"),
      scope("channels.config:write", "Change a channel's configuration"),
      scope("channels.heartbeat:read", "Read a channel's heartbeat settings"),
      scope("channels.heartbeat:write", "Change a channel's heartbeat settings"),
      scope("channels.integrations:read", "List a channel's integration bindings"),
      scope("channels.integrations:write", "Bind and unbind integrations on a channel")
    ]
  },
  { name: "Chat", scopes: [scope("chat", "Send blocking and streaming chat, cancel runs, submit tool results")] },
  {
    name: "Sessions",
    scopes: [
      scope("sessions:read", "List sessions and read their messages"),
      scope("sessions:write", "Create sessions and inject messages")
    ]
  },
  {
    name: "Bots",
    scopes: [
      scope("bots:read", "List and read bots"),
      scope("bots:write", "Create and update bots"),
      scope("bots:delete", "Delete bots")
    ]
  },
  { name: "Tasks", scopes: [scope("tasks:read", "Read tasks and their results"), scope("tasks:write", "Create and cancel tasks")] },
  {
    name: "Workspaces",
    scopes: [
      scope("workspaces:read", "List and read workspaces"),
      scope("workspaces:write", "Create and configure workspaces"),
      scope("workspaces.files:read", "Read files in channel workspaces"),
      scope("workspaces.files:write", "Write and delete files in channel workspaces")
    ]
  },
  {
    name: "Documents",
    scopes: [scope("documents:read", "Read and search documents"), scope("documents:write", "Ingest and delete documents")]
  },
  {
    name: "Knowledge",
    scopes: [
      scope("knowledge:read", "Read knowledge entries (deprecated: workspace files are preferred)"),
      scope("knowledge:write", "Write knowledge entries (deprecated: workspace files are preferred)")
    ]
  },
  { name: "Todos", scopes: [scope("todos:read", "Read todos"), scope("todos:write", "Create and update todos")] },
  {
    name: "Attachments",
    scopes: [scope("attachments:read", "Read attachments"), scope("attachments:write", "Upload and delete attachments")]
  },
  { name: "Logs", scopes: [scope("logs:read", "Read logs"), scope("logs:write", "Write logs")] },
  { name: "Tools", scopes: [scope("tools:read", "List tools and their schemas"), scope("tools:execute", "Execute tools directly")] },
  {
    name: "Providers",
    scopes: [scope("providers:read", "List LLM providers and models"), scope("providers:write", "Create, update and delete LLM providers")]
  },
  { name: "Users", scopes: [scope("users:read", "List users"), scope("users:write", "Create, update and delete users")] },
  { name: "Settings", scopes: [scope("settings:read", "Read server settings"), scope("settings:write", "Change server settings")] },
  {
    name: "Operations",
    scopes: [
      scope("operations:read", "Read operational state (backups, repository pull, restart)"),
      scope("operations:write", "Run operations (backups, repository pull, restart)")
    ]
  },
  {
    name: "Approvals",
    scopes: [
      scope("approvals:read", "See tool calls waiting for approval"),
      scope("approvals:write", "Approve or deny a tool call (also granted by chat, for a client's own runs)")
    ]
  },
  { name: "Usage", scopes: [scope("usage:read", "Read LLM usage and cost")] },
  {
    name: "Capabilities",
    scopes: [
      scope("carapaces:read", "List and read carapaces (capability bundles)"),
      scope("carapaces:write", "Create, update and delete carapaces")
    ]
  },
  { name: "Workflows", scopes: [scope("workflows:read", "Read workflows"), scope("workflows:write", "Create and run workflows")] },
  { name: "LLM", scopes: [scope("llm:completions", "Call the LLM completion proxy")] },
  {
    name: "Mission control",
    scopes: [scope("mission_control:read", "Read mission-control state"), scope("mission_control:write", "Change mission-control state")]
  }
] as const satisfies ReadonlyArray<ScopeGroup>

/** A scope name: a typo in a scope written in code does not compile. */
export type Scope = (typeof scopeGroups)[number]["scopes"][number]["name"]

export const allScopes: ReadonlyArray<Scope> = scopeGroups.flatMap((group): ReadonlyArray<Scope> => group.scopes.map((s) => s.name))

/**
 * A scope name from outside the code (a request body, a command-line flag): one of the declared
 * names, or a failure naming the unknown one (`Unknown scope: root`).
 */
export const ScopeName = Schema.Literal(...allScopes).annotations({
  identifier: "Scope",
  description: "A scope name of the catalogue (GET /api/v1/scopes)",
  message: (issue) => ({ message: `Unknown scope: ${String(issue.actual)}`, override: true })
})

/** Narrows a name from outside the code (an integration's route) to a `Scope`. */
export const isScope: (name: unknown) => name is Scope = Schema.is(ScopeName)

/**
 * The scopes a credential holds as stored or signed (a key's jsonb column, a token's claim): the
 * declared names, any other entry dropped, so a name this release does not declare (or a bad value)
 * grants nothing and breaks nothing.
 */
export const HeldScopes: Schema.Schema<ReadonlyArray<Scope>, unknown> = Schema.transform(Schema.Unknown, Schema.Array(ScopeName), {
  strict: true,
  decode: (held) => (Array.isArray(held) ? held.filter(isScope) : []),
  encode: (scopes) => scopes
})

/**
 * Scopes a held scope grants beyond itself. `admin` grants everything (handled in `grants`);
 * `channels:write` grants every `channels.*:write` as the spec says, and by the same reading
 * `channels:read` grants every `channels.*:read`. `chat` grants `approvals:write`: a chat client
 * decides the approvals its own runs ask for.
 */
const implied = (held: Scope): ReadonlyArray<Scope> => {
  if (held === "chat") return ["approvals:write"]
  if (held === "channels:write") return allScopes.filter((s) => s.startsWith("channels.") && s.endsWith(":write"))
  if (held === "channels:read") return allScopes.filter((s) => s.startsWith("channels.") && s.endsWith(":read"))
  return []
}

/** The full set a list of held scopes grants, implications applied. */
export const expandScopes = (held: Iterable<Scope>): ReadonlySet<Scope> => {
  const out = new Set<Scope>()
  for (const s of held) {
    out.add(s)
    for (const extra of implied(s)) out.add(extra)
  }
  return out
}

/**
 * Deprecated scopes and the scope each still stands in for: the knowledge scopes grant the document
 * routes, and an answer given under one carries a `Deprecation` header (see `grantedAsDeprecated`).
 */
export const deprecatedScopes = {
  "knowledge:read": "documents:read",
  "knowledge:write": "documents:write"
} as const satisfies Partial<Record<Scope, Scope>>

/** When the deprecated scopes were deprecated, for the `Deprecation` header. */
export const deprecationDate = new Date("2026-06-01T00:00:00Z")

type DeprecatedScope = keyof typeof deprecatedScopes

const deprecatedFor = new Map<Scope, DeprecatedScope>(Records.toEntries(deprecatedScopes).map(([old, current]) => [current, old]))

/** Whether an expanded scope set satisfies a required scope (directly, or through a deprecated alias). */
export const grants = (expanded: ReadonlySet<Scope>, required: Scope): boolean => {
  if (expanded.has("admin") || expanded.has(required)) return true
  const old = deprecatedFor.get(required)
  return old !== undefined && expanded.has(old)
}

/** The deprecated scope a grant of `required` rests on, when no current scope grants it. */
export const grantedAsDeprecated = (expanded: ReadonlySet<Scope>, required: Scope): DeprecatedScope | undefined => {
  if (expanded.has("admin") || expanded.has(required)) return undefined
  const old = deprecatedFor.get(required)
  return old !== undefined && expanded.has(old) ? old : undefined
}

export interface ScopePreset {
  readonly id: string
  readonly name: string
  readonly scopes: ReadonlyArray<Scope>
}

export const presets: ReadonlyArray<ScopePreset> = [
  {
    id: "messaging_integration",
    name: "Messaging Integration",
    scopes: [
      "chat",
      "bots:read",
      "channels:read",
      "channels:write",
      "channels.config:read",
      "channels.config:write",
      "sessions:read",
      "sessions:write",
      "todos:read",
      "llm:completions"
    ]
  },
  {
    id: "chat_client",
    name: "Chat Client",
    scopes: ["chat", "bots:read", "channels:read", "channels:write", "sessions:read", "attachments:read", "attachments:write"]
  },
  {
    id: "container_bot",
    name: "Container Bot",
    scopes: [
      "chat",
      "bots:read",
      "channels:read",
      "channels:write",
      "tasks:read",
      "tasks:write",
      "documents:read",
      "documents:write",
      "todos:read",
      "todos:write",
      "workspaces.files:read",
      "workspaces.files:write",
      "attachments:read",
      "attachments:write",
      "carapaces:read",
      "carapaces:write",
      "tools:read",
      "tools:execute"
    ]
  },
  {
    id: "read_only_monitor",
    name: "Read-Only Monitor",
    scopes: ["bots:read", "channels:read", "sessions:read", "tasks:read", "todos:read", "attachments:read", "logs:read"]
  },
  {
    id: "mission_control",
    name: "Mission Control",
    scopes: [
      "bots:read",
      "channels:read",
      "sessions:read",
      "tasks:read",
      "tasks:write",
      "todos:read",
      "todos:write",
      "workspaces:read",
      "workspaces.files:read",
      "workspaces.files:write",
      "attachments:read",
      "logs:read",
      "mission_control:read",
      "mission_control:write",
      "carapaces:read"
    ]
  }
]

/**
 * The preset of users with the `member` role (local or OIDC users who are not admins): what a chat
 * client needs, plus reading the workspace. Not one of the spec's five key presets.
 */
export const memberScopes: ReadonlyArray<Scope> = [
  "chat",
  "bots:read",
  "channels:read",
  "channels:write",
  "sessions:read",
  "sessions:write",
  "attachments:read",
  "attachments:write",
  "todos:read",
  "todos:write",
  "documents:read",
  "workspaces:read",
  "workspaces.files:read",
  "tools:read"
]

/** The required-scope value of routes that need no credentials. */
export const PUBLIC = "public" as const

/** The required-scope value of routes open to any valid credential, whatever its scopes. */
export const AUTHENTICATED = "authenticated" as const

/** What an endpoint can require: a scope, no credentials, or any valid credential. */
export type ScopeRequirement = Scope | typeof PUBLIC | typeof AUTHENTICATED
