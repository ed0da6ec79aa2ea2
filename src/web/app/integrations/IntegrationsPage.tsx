/**
 * The integrations: `/admin/integrations` lists them with their status and why; an integration's
 * own page is `/admin/integrations/<id>` (its settings, workers, webhook, dashboard modules, and a
 * sidebar item's answer with `?item=<href>`).
 */
import type { PageProps } from "../pages.ts"
import { navigate } from "../route.ts"
import { Icon } from "../ui/Icon.tsx"
import { Page, StatusBadge } from "../ui/Page.tsx"
import { scrollRegion } from "../ui/scrollRegion.ts"
import { useLoad } from "../ui/useLoad.ts"
import { IntegrationView } from "./Integration.tsx"
import { statusBadge, statusLabel, statusReason } from "./status.ts"

export const integrationHref = (id: string) => `/admin/integrations/${encodeURIComponent(id)}`

const IntegrationList = ({ auth }: Pick<PageProps, "auth">) => {
  const { data, error, loading } = useLoad(async () => (await auth.call((client) => client.integrations.list())).integrations, [auth])
  return (
    <Page title="Integrations" error={error} loading={loading} testId="integrations">
      <p className="muted">
        Found at startup in the project's <code>integrations/</code>, each <code>INTEGRATION_DIRS</code> folder and the shared workspace.
      </p>
      <div {...scrollRegion}>
        <table className="data">
          <thead>
            <tr>
              <th>Integration</th>
              <th>Status</th>
              <th>Parts</th>
              <th>Workers</th>
            </tr>
          </thead>
          <tbody>
            {(data ?? []).map((integration) => {
              const reason = statusReason(integration)
              const href = integrationHref(integration.id)
              return (
                <tr key={integration.id} data-testid={`integration-${integration.id}`}>
                  <td>
                    <a
                      href={href}
                      onClick={(event) => {
                        if (event.metaKey || event.ctrlKey || event.shiftKey) return
                        event.preventDefault()
                        navigate(href)
                      }}
                    >
                      {integration.name}
                    </a>{" "}
                    <span className="muted">{integration.id}{integration.version ? ` · ${integration.version}` : ""}</span>
                  </td>
                  <td>
                    <StatusBadge state={statusBadge(integration.health)} label={statusLabel(integration.health)} />
                    {reason ? <div className="muted small-text">{reason}</div> : null}
                  </td>
                  <td>
                    <span className="chips">
                      {integration.parts.map((part) => <span key={part} className="chip">{part}</span>)}
                    </span>
                  </td>
                  <td>
                    {integration.workers.length === 0 ? <span className="muted">none</span> : (
                      <span className="chips">
                        {integration.workers.map((worker) => (
                          <span key={worker.name} className="chip" title={worker.description}>
                            <Icon name="Activity" size={12} /> {worker.name}: {worker.state.replaceAll("_", " ")}
                          </span>
                        ))}
                      </span>
                    )}
                  </td>
                </tr>
              )
            })}
          </tbody>
        </table>
      </div>
      {data && data.length === 0 ? <p className="muted">No integrations were found.</p> : null}
    </Page>
  )
}

const IntegrationsPage = ({ auth, rest }: PageProps) =>
  rest[0] ? <IntegrationView key={rest[0]} auth={auth} id={rest[0]} /> : <IntegrationList auth={auth} />

export default IntegrationsPage
