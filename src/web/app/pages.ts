/**
 * The app's pages, declared once: the navigation, the router and the scope checks derive from
 * this list. A page is shown to a user whose token allows the call it reads first (`reads`); its
 * controls check their own calls (`allows`). Pages load on first visit, so the chat's bundle
 * carries none of the console.
 */
import type { ComponentType } from "react"
import type { Scope } from "../../auth/Scopes.ts"
import type { AuthSession } from "../shared/session.ts"
import type { Endpoint } from "./scopes.ts"

export interface PageProps {
  readonly auth: AuthSession
  /** The path under the page's own (`/admin/bots/helper` gives `["helper"]`). */
  readonly rest: ReadonlyArray<string>
}

/** The navigation's groups, in order: each folds (see NavGroup.tsx). */
export const pageGroups = ["Configure", "Access", "Operate", "Server"] as const
export type PageGroup = (typeof pageGroups)[number]

export interface AppPage {
  readonly id: string
  readonly path: string
  readonly title: string
  readonly icon: string
  readonly group: PageGroup
  /** The call whose scope shows the page; a declared scope for pages on an integration's own routes. */
  readonly reads: Endpoint | Scope
  readonly load: () => Promise<{ readonly default: ComponentType<PageProps> }>
}

export const pages: ReadonlyArray<AppPage> = [
  // Configure: what the bots are and what they reach.
  {
    id: "bots",
    path: "/admin/bots",
    title: "Bots",
    icon: "Bot",
    group: "Configure",
    reads: ["bots", "list"],
    load: () => import("./bots/BotsPage.tsx")
  },
  {
    id: "channels",
    path: "/admin/channels",
    title: "Channels",
    icon: "Hash",
    group: "Configure",
    reads: ["channels", "list"],
    load: () => import("./channels/ChannelsPage.tsx")
  },
  {
    id: "keys",
    path: "/admin/keys",
    title: "API keys",
    icon: "Key",
    group: "Access",
    reads: ["apiKeys", "list"],
    load: () => import("./keys/KeysPage.tsx")
  },
  {
    id: "users",
    path: "/admin/users",
    title: "Users",
    icon: "Users",
    group: "Access",
    reads: ["users", "list"],
    load: () => import("./users/UsersPage.tsx")
  },
  {
    id: "account",
    path: "/account",
    title: "Your account",
    icon: "Lock",
    group: "Access",
    reads: ["auth", "changePassword"],
    load: () => import("./account/AccountPage.tsx")
  },
  {
    id: "providers",
    path: "/admin/providers",
    title: "Providers and models",
    icon: "Server",
    group: "Configure",
    reads: ["providers", "list"],
    load: () => import("./providers/ProvidersPage.tsx")
  },
  {
    id: "integrations",
    path: "/admin/integrations",
    title: "Integrations",
    icon: "Plug",
    group: "Configure",
    reads: ["integrations", "list"],
    load: () => import("./integrations/IntegrationsPage.tsx")
  },
  {
    id: "widget",
    path: "/admin/widget",
    title: "Widget",
    icon: "MessageSquare",
    group: "Configure",
    reads: ["widget", "settings"],
    load: () => import("./widget/WidgetPage.tsx")
  },
  // Operate: what the server is doing.
  {
    id: "usage",
    path: "/admin/usage",
    title: "Usage",
    icon: "BarChart3",
    group: "Operate",
    reads: ["usage", "report"],
    load: () => import("./usage/UsagePage.tsx")
  },
  {
    id: "tasks",
    path: "/admin/tasks",
    title: "Tasks",
    icon: "ListChecks",
    group: "Operate",
    reads: ["tasks", "list"],
    load: () => import("./tasks/TasksPage.tsx")
  },
  {
    id: "approvals",
    path: "/admin/approvals",
    title: "Approvals",
    icon: "ListChecks",
    group: "Operate",
    reads: ["chat", "approvals"],
    load: () => import("./approvals/ApprovalsPage.tsx")
  },
  {
    id: "dead-letters",
    path: "/admin/dead-letters",
    title: "Dead letters",
    icon: "ClipboardList",
    group: "Operate",
    reads: ["deadLetters", "list"],
    load: () => import("./deadLetters/DeadLettersPage.tsx")
  },
  {
    id: "documents",
    path: "/admin/documents",
    title: "Documents",
    icon: "FileText",
    group: "Operate",
    reads: ["documents", "list"],
    load: () => import("./documents/DocumentsPage.tsx")
  },
  {
    id: "logs",
    path: "/admin/logs",
    title: "Logs",
    icon: "ScrollText",
    group: "Operate",
    reads: ["logs", "turns"],
    load: () => import("./logs/LogsPage.tsx")
  },
  {
    id: "workflows",
    path: "/admin/workflows",
    title: "Workflows",
    icon: "Workflow",
    group: "Operate",
    reads: ["workflows", "list"],
    load: () => import("./workflows/WorkflowsPage.tsx")
  },
  // Mission control's routes are its integration's own (outside the typed client): gated by the scope its router declares.
  {
    id: "mission-control",
    path: "/admin/mission-control",
    title: "Mission control",
    icon: "LayoutDashboard",
    group: "Operate",
    reads: "mission_control:read",
    load: () => import("./missionControl/MissionControlPage.tsx")
  },
  {
    id: "settings",
    path: "/admin/settings",
    title: "Settings",
    icon: "Settings",
    group: "Server",
    reads: ["settings", "list"],
    load: () => import("./settings/SettingsPage.tsx")
  },
  {
    id: "backups",
    path: "/admin/backups",
    title: "Backups",
    icon: "HardDrive",
    group: "Server",
    reads: ["operations", "history"],
    load: () => import("./backups/BackupsPage.tsx")
  }
]

/** The console page a path opens, with the rest of the path; undefined for the chat's paths. */
export const pageAt = (path: string): { readonly page: AppPage; readonly rest: ReadonlyArray<string> } | undefined => {
  for (const page of pages) {
    if (path === page.path || path.startsWith(`${page.path}/`)) {
      const rest = path.slice(page.path.length).split("/").filter((part) => part.length > 0).map(decodeURIComponent)
      return { page, rest }
    }
  }
  return undefined
}
