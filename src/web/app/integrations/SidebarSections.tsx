/**
 * The integrations' own sidebar sections (their SETUP manifests' `sidebar_section`): title, icon by
 * name (`Plug` when unknown), items, and a readiness dot read from the section's
 * `readiness_endpoint`/`readiness_field`. An item opens inside the console's integration page.
 */
import { useEffect, useState } from "react"
import type { AuthSession } from "../../shared/session.ts"
import { navigate, useQueryParam } from "../route.ts"
import { allows } from "../scopes.ts"
import { drawnIconName, Icon } from "../ui/Icon.tsx"
import { useLoad } from "../ui/useLoad.ts"
import { READINESS_POLL_MS } from "./polling.ts"
import { fetchRoute } from "./routeFetch.ts"

type Readiness = "ready" | "not_ready" | "unknown"

/** A readiness field's value as a state: true, a positive count or a healthy word is ready. */
export const readinessOf = (value: unknown): Readiness => {
  if (value === true) return "ready"
  if (typeof value === "number") return value > 0 ? "ready" : "not_ready"
  if (typeof value === "string") {
    const word = value.trim().toLowerCase()
    if (["ok", "ready", "healthy", "up", "connected", "running", "online"].includes(word)) return "ready"
    if (word.length > 0) return "not_ready"
  }
  if (value === false || value === null) return "not_ready"
  return "unknown"
}

/** The link an item opens: the integration page, showing the item's route. */
export const itemHref = (integrationId: string, href: string) =>
  `/admin/integrations/${encodeURIComponent(integrationId)}?item=${encodeURIComponent(href)}`

const ReadinessDot = ({ auth, endpoint, field, title }: { auth: AuthSession; endpoint: string; field: string | null; title: string }) => {
  const [state, setState] = useState<Readiness>("unknown")
  useEffect(() => {
    let live = true
    const check = async () => {
      try {
        const response = await fetchRoute(auth, endpoint)
        // Refused to this user: the dot cannot tell, so it says so rather than "not ready".
        if (response.status === 401 || response.status === 403) return live && setState("unknown")
        if (!response.ok) return live && setState("not_ready")
        const body = (await response.json()) as Record<string, unknown>
        if (live) setState(field ? readinessOf(body?.[field]) : "ready")
      } catch {
        if (live) setState("not_ready")
      }
    }
    void check()
    const timer = setInterval(() => void check(), READINESS_POLL_MS)
    return () => {
      live = false
      clearInterval(timer)
    }
  }, [auth, endpoint, field])
  const label = state === "ready" ? "ready" : state === "not_ready" ? "not ready" : "readiness unknown"
  // The state is text for screen readers, not an aria-label (a label would name the section's links too).
  return (
    <span className={`ready-dot ${state}`} data-testid={`readiness-${title}`} data-state={state} title={label}>
      <span className="visually-hidden">{label}</span>
    </span>
  )
}

export const IntegrationSections = (
  { auth, path, onGo }: { readonly auth: AuthSession; readonly path: string; readonly onGo: () => void }
) => {
  const permitted = allows(auth, ["integrations", "sidebar"])
  const { data } = useLoad(async () => (permitted ? (await auth.call((client) => client.integrations.sidebar())).sections : []), [
    auth,
    permitted
  ])
  const openItem = useQueryParam("item")
  if (!data || data.length === 0) return null
  return (
    <>
      {data.map((section) => (
        <div key={section.id} className="nav-group" data-testid={`sidebar-section-${section.id}`}>
          <h2 className="row">
            <Icon name={section.icon} />
            <span data-icon={drawnIconName(section.icon)}>{section.title}</span>
            {section.readiness_endpoint
              ? <ReadinessDot auth={auth} endpoint={section.readiness_endpoint} field={section.readiness_field} title={section.title} />
              : null}
          </h2>
          {section.items.map((item) => {
            const href = itemHref(section.integration_id, item.href)
            const current = path === `/admin/integrations/${encodeURIComponent(section.integration_id)}` && openItem === item.href
            return (
              <a
                key={item.href}
                href={href}
                className={`nav-link${current ? " current" : ""}`}
                aria-current={current ? "page" : undefined}
                onClick={(event) => {
                  event.preventDefault()
                  onGo()
                  navigate(href)
                }}
              >
                <Icon name={item.icon} />
                <span data-icon={drawnIconName(item.icon)}>{item.label}</span>
              </a>
            )
          })}
        </div>
      ))}
    </>
  )
}
