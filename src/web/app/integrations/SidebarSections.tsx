/**
 * The integrations' own sidebar sections (their SETUP manifests' `sidebar_section`): title, icon by
 * name (`Plug` when unknown), items, and a status dot: the integration's status from its own last
 * real contact (`GET /api/v1/admin/integrations`, `health`), grey while not configured or paused.
 * An item opens inside the console's integration page.
 */
import type { IntegrationSummary } from "../../../integrations/Api.ts"
import type { AuthSession } from "../../shared/session.ts"
import { NavGroup } from "../NavGroup.tsx"
import { navigate, useQueryParam } from "../route.ts"
import { allows } from "../scopes.ts"
import { drawnIconName, Icon } from "../ui/Icon.tsx"
import { useLoad, usePoll } from "../ui/useLoad.ts"
import { READINESS_POLL_MS } from "./polling.ts"
import { statusBadge } from "./status.ts"

/** The link an item opens: the integration page, showing the item's route. */
export const itemHref = (integrationId: string, href: string) =>
  `/admin/integrations/${encodeURIComponent(integrationId)}?item=${encodeURIComponent(href)}`

/** The integration's status as a dot: its colour the console's badge colour, its words the API's. */
const StatusDot = ({ health, title }: { readonly health: IntegrationSummary["health"] | undefined; readonly title: string }) => {
  const label = health?.words ?? "status unknown"
  // The state is text for screen readers, not an aria-label (a label would name the section's links too).
  return (
    <span
      className={`ready-dot ${health ? statusBadge(health) : "off"}`}
      data-testid={`readiness-${title}`}
      data-state={health?.state ?? "unknown"}
      title={label}
    >
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
  const statuses = useLoad(
    async () => (allows(auth, ["integrations", "list"]) ? (await auth.call((client) => client.integrations.list())).integrations : []),
    [auth]
  )
  usePoll(statuses.reload, READINESS_POLL_MS, permitted)
  const healthOf = (id: string) => statuses.data?.find((integration) => integration.id === id)?.health
  const openItem = useQueryParam("item")
  if (!data || data.length === 0) return null
  return (
    <>
      {data.map((section) => {
        const onPage = path === `/admin/integrations/${encodeURIComponent(section.integration_id)}`
        return (
          <NavGroup
            key={section.id}
            id={`integration-${section.id}`}
            testId={`sidebar-section-${section.id}`}
            icon={<Icon name={section.icon} />}
            title={<span data-icon={drawnIconName(section.icon)}>{section.title}</span>}
            after={<StatusDot health={healthOf(section.integration_id)} title={section.title} />}
            holdsCurrent={onPage}
          >
            {section.items.map((item) => {
              const href = itemHref(section.integration_id, item.href)
              const current = onPage && openItem === item.href
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
          </NavGroup>
        )
      })}
    </>
  )
}
