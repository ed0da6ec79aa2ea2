/**
 * One integration's page: its status and why, its settings form (from its SETUP manifest), its
 * webhook URL to copy, its workers and background process, its dashboard modules, and the answer of
 * one of its sidebar items (`?item=<href>`).
 */
import type { IntegrationSummary, SidebarSectionView } from "../../../integrations/Api.ts"
import type { AuthSession } from "../../shared/session.ts"
import { navigate, useQueryParam } from "../route.ts"
import { allows } from "../scopes.ts"
import { CopyValue } from "../ui/Copy.tsx"
import { Icon } from "../ui/Icon.tsx"
import { Page, Section, StatusBadge, When } from "../ui/Page.tsx"
import { scrollRegion } from "../ui/scrollRegion.ts"
import { useLoad, usePoll } from "../ui/useLoad.ts"
import { ItemView } from "./ItemView.tsx"
import { WORKERS_POLL_MS, WORKERS_SETTLING_POLL_MS } from "./polling.ts"
import { isLocalPath } from "./routeFetch.ts"
import { SettingsForm } from "./SettingsForm.tsx"
import { itemHref } from "./SidebarSections.tsx"
import { statusBadge, statusLabel, statusReason } from "./status.ts"

/** The manifest's webhook path as an absolute URL on this server (its `<SETTING>` placeholders kept). */
const webhookUrl = (path: string) => (isLocalPath(path) ? `${window.location.origin}${path}` : path)

const workerBadge = (state: string): "ok" | "warn" | "bad" | "off" =>
  state === "running" ? "ok" : state === "backing_off" ? "bad" : state === "starting" || state === "waiting_for_settings" ? "warn" : "off"

/** The process endpoint answers a free-form status: its plain fields, as a definition list. */
const ProcessStatus = ({ auth, id }: { readonly auth: AuthSession; readonly id: string }) => {
  const { data, error } = useLoad(
    async () => (await auth.call((client) => client.integrations.process({ path: { id } }))) as Record<string, unknown>,
    [auth, id]
  )
  if (error) return <p role="alert" className="error">{error}</p>
  if (!data) return <p className="muted">Loading…</p>
  const plain = Object.entries(data).filter(([key, value]) => key !== "integration_id" && (value === null || typeof value !== "object"))
  return (
    <dl className="facts" aria-label="Background process">
      {plain.map(([key, value]) => (
        <div key={key}>
          <dt>{key.replaceAll("_", " ")}</dt>
          <dd>{value === null ? "—" : String(value)}</dd>
        </div>
      ))}
    </dl>
  )
}

/** The item a sidebar link opens (`?item=<href>`), or why it cannot be shown. */
const OpenItemSection = ({ auth, item, section, integration, loading }: {
  readonly auth: AuthSession
  readonly item: string
  readonly section: SidebarSectionView | undefined
  readonly integration: IntegrationSummary
  readonly loading: boolean
}) => {
  const openItem = section?.items.find((entry) => entry.href === item)
  return (
    <Section title={openItem ? openItem.label : "Item"}>
      {openItem ?
        <ItemView auth={auth} href={openItem.href} /> :
        (
          <p role="alert" className="error">
            {loading ? "Loading…" : `${item} is not an item of ${integration.name}'s sidebar section.`}
          </p>
        )}
    </Section>
  )
}

const WebhookSection = ({ webhook }: { readonly webhook: NonNullable<IntegrationSummary["webhook"]> }) => (
  <Section title="Webhook">
    <div className="stack">
      {webhook.description ? <p>{webhook.description}</p> : null}
      <CopyValue label="Webhook URL" value={webhookUrl(webhook.path)} />
      {/<[A-Za-z0-9_]+>/.test(webhook.path) ?
        (
          <small className="muted">
            Replace each &lt;SETTING&gt; with that setting's value: a secret is never shown here.
          </small>
        ) :
        null}
    </div>
  </Section>
)

const WorkersTable = ({ workers }: { readonly workers: IntegrationSummary["workers"] }) => (
  <div {...scrollRegion}>
    <table className="data">
      <thead>
        <tr>
          <th>Worker</th>
          <th>State</th>
          <th className="num">Restarts</th>
          <th>Started</th>
          <th>Last error</th>
        </tr>
      </thead>
      <tbody>
        {workers.map((worker) => (
          <tr key={worker.name} data-testid={`worker-${worker.name}`}>
            <td>
              {worker.name}
              {worker.singleton ? <span className="chip">singleton</span> : null}
              <div className="muted small-text">{worker.description}</div>
            </td>
            <td>
              <StatusBadge state={workerBadge(worker.state)} label={worker.state.replaceAll("_", " ")} />
              {worker.missing_settings.length > 0
                ? <div className="muted small-text">Needs {worker.missing_settings.join(", ")}</div>
                : null}
            </td>
            <td className="num">{worker.restarts}</td>
            <td>
              <When at={worker.started_at} />
            </td>
            <td>
              {worker.last_error
                ? <span className="error">{worker.last_error.message}</span>
                : <span className="muted">none</span>}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  </div>
)

/** The integration's workers and, when it has one, its background process. */
const WorkersSection = ({ auth, id, integration }: {
  readonly auth: AuthSession
  readonly id: string
  readonly integration: IntegrationSummary
}) => (
  <Section title="Workers">
    {integration.workers.length === 0 ? <p className="muted">No workers.</p> : <WorkersTable workers={integration.workers} />}
    {integration.parts.includes("process") ?
      (
        <>
          <h3>Background process</h3>
          <ProcessStatus auth={auth} id={id} />
        </>
      ) :
      null}
  </Section>
)

const DashboardModulesSection = ({ modules }: { readonly modules: IntegrationSummary["dashboard_modules"] }) => (
  <Section title="Dashboard modules">
    <ul className="cards">
      {modules.map((module) => (
        <li key={module.id} className="card" data-testid={`module-${module.id}`}>
          <Icon name={module.icon} size={20} />
          <div>
            <strong>{module.label}</strong>
            {module.description ? <div className="muted">{module.description}</div> : null}
          </div>
        </li>
      ))}
    </ul>
  </Section>
)

/** The integration's sidebar section, each item a link that opens it on this page. */
const SidebarLinksSection = ({ id, section }: { readonly id: string; readonly section: SidebarSectionView }) => (
  <Section title={`Sidebar: ${section.title}`}>
    <ul className="cards">
      {section.items.map((entry) => {
        const href = itemHref(id, entry.href)
        return (
          <li key={entry.href} className="card">
            <Icon name={entry.icon} />
            <a
              href={href}
              onClick={(event) => {
                event.preventDefault()
                navigate(href)
              }}
            >
              {entry.label}
            </a>
            <code className="muted">{entry.href}</code>
          </li>
        )
      })}
    </ul>
  </Section>
)

export const IntegrationView = ({ auth, id }: { readonly auth: AuthSession; readonly id: string }) => {
  const list = useLoad(async () => (await auth.call((client) => client.integrations.list())).integrations, [auth])
  const sidebar = useLoad(
    async () => (allows(auth, ["integrations", "sidebar"]) ? (await auth.call((client) => client.integrations.sidebar())).sections : []),
    [auth]
  )
  const item = useQueryParam("item")
  const integration = list.data?.find((entry) => entry.id === id)
  const section = sidebar.data?.find((entry) => entry.integration_id === id)
  const missing = list.data && !integration ? `No integration ${id}` : undefined
  const reason = integration ? statusReason(integration) : null
  // The workers table follows the workers: saved settings restart them a moment after the save answers.
  const settling = integration?.workers.some((worker) => worker.state === "starting" || worker.state === "backing_off") ?? false
  usePoll(list.reload, settling ? WORKERS_SETTLING_POLL_MS : WORKERS_POLL_MS, (integration?.workers.length ?? 0) > 0)

  return (
    <Page
      title={integration?.name ?? id}
      error={list.error ?? missing}
      loading={list.loading}
      testId="integration"
      actions={
        <a
          href="/admin/integrations"
          onClick={(event) => {
            event.preventDefault()
            navigate("/admin/integrations")
          }}
        >
          All integrations
        </a>
      }
    >
      {integration ?
        (
          <>
            <div className="row" data-testid="integration-status">
              <StatusBadge state={statusBadge(integration.health)} label={statusLabel(integration.health)} />
              <span className="muted">{integration.id}{integration.version ? ` · ${integration.version}` : ""}</span>
              <span className="chips">{integration.parts.map((part) => <span key={part} className="chip">{part}</span>)}</span>
            </div>
            {reason
              ? <p className={integration.health.state === "failing" ? "error" : "muted"} data-testid="integration-reason">{reason}</p>
              : null}
            {item ?
              <OpenItemSection auth={auth} item={item} section={section} integration={integration} loading={sidebar.loading} /> :
              null}
            {integration.status !== "failed" && allows(auth, ["integrations", "getSettings"])
              ? <SettingsForm auth={auth} id={id} onSaved={() => void list.reload()} />
              : null}
            {integration.webhook ? <WebhookSection webhook={integration.webhook} /> : null}
            <WorkersSection auth={auth} id={id} integration={integration} />
            {integration.dashboard_modules.length > 0 ? <DashboardModulesSection modules={integration.dashboard_modules} /> : null}
            {section ? <SidebarLinksSection id={id} section={section} /> : null}
          </>
        ) :
        null}
    </Page>
  )
}
