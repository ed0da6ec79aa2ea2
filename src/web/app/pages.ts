/**
 * The app's pages, declared once: the navigation, the router and the scope checks derive from
 * this list. A page is shown to a user whose token allows the call it reads first (`reads`); its
 * controls check their own calls (`allows`). Pages load on first visit, so the chat's bundle
 * carries none of the console.
 */
import type { ComponentType } from "react"
import type { AuthSession } from "../shared/session.ts"
import type { Endpoint } from "./scopes.ts"

export interface PageProps {
  readonly auth: AuthSession
  /** The path under the page's own (`/admin/bots/helper` gives `["helper"]`). */
  readonly rest: ReadonlyArray<string>
}

export interface AppPage {
  readonly id: string
  readonly path: string
  readonly title: string
  readonly icon: string
  readonly group: "Configure" | "Operate"
  readonly reads: Endpoint
  readonly load: () => Promise<{ readonly default: ComponentType<PageProps> }>
}

export const pages: ReadonlyArray<AppPage> = [
  { id: "bots", path: "/admin/bots", title: "Bots", icon: "Bot", group: "Configure", reads: ["bots", "list"], load: () => import("./bots/BotsPage.tsx") },
  {
    id: "channels",
    path: "/admin/channels",
    title: "Channels",
    icon: "Hash",
    group: "Configure",
    reads: ["channels", "list"],
    load: () => import("./channels/ChannelsPage.tsx")
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
