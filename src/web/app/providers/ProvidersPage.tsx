/**
 * Providers and models: the LLM providers (the environment's default one read-only), each with its
 * masked key, a connection test (the provider's own model list fetched with the stored key), its
 * models with their prices, and adding, editing and deleting providers.
 */
import { useState } from "react"
import type { ModelList, ProviderView } from "../../../providers/Model.ts"
import type { AuthSession } from "../../shared/session.ts"
import type { PageProps } from "../pages.ts"
import { allows } from "../scopes.ts"
import { ConfirmDialog } from "../ui/Dialog.tsx"
import { Page, Section, StatusBadge } from "../ui/Page.tsx"
import { useAction, useLoad } from "../ui/useLoad.ts"
import { ProviderDialog } from "./ProviderDialog.tsx"

const price = (value: number | null) => (value === null ? <span className="muted">unknown</span> : `$${value}`)

const ModelsTable = ({ list }: { readonly list: ModelList }) =>
  list.models.length === 0 ? <p className="muted">No models.</p> : (
    <div className="table-scroll">
      <table className="data" aria-label={`Models of ${list.provider_id}`}>
        <thead>
          <tr>
            <th>Model</th>
            <th className="num">Input / M tokens</th>
            <th className="num">Output / M tokens</th>
            <th>Listed by</th>
          </tr>
        </thead>
        <tbody>
          {list.models.map((model) => (
            <tr key={model.id}>
              <td>
                <code>{model.id}</code>
              </td>
              <td className="num">{price(model.input_price_per_million)}</td>
              <td className="num">{price(model.output_price_per_million)}</td>
              <td>{model.sources.map((source) => (source === "configured" ? "configured here" : "the provider")).join(", ")}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  )

const ProviderCard = ({ auth, provider, onEdit, onDelete }: {
  readonly auth: AuthSession
  readonly provider: ProviderView
  readonly onEdit: (() => void) | undefined
  readonly onDelete: (() => void) | undefined
}) => {
  const [models, setModels] = useState<ModelList | undefined>()
  const [tested, setTested] = useState(false)
  const load = useAction()
  const fetchModels = async (asTest: boolean) => {
    const list = await load.run(() => auth.call((client) => client.providers.models({ path: { id: provider.id } })))
    if (list) setModels(list)
    setTested(asTest)
  }
  const upstreamCount = models?.models.filter((m) => m.sources.includes("upstream")).length ?? 0
  return (
    <Section
      title={provider.id}
      actions={
        <>
          <button type="button" className="small" disabled={load.busy} onClick={() => void fetchModels(true)}>Test connection</button>
          <button
            type="button"
            className="small"
            disabled={load.busy}
            onClick={() => (models && !tested ? setModels(undefined) : void fetchModels(false))}
          >
            {models && !tested ? "Hide models" : "Models"}
          </button>
          {onEdit ? <button type="button" className="small" onClick={onEdit}>Edit</button> : null}
          {onDelete ? <button type="button" className="small" onClick={onDelete}>Delete</button> : null}
        </>
      }
    >
      <dl className="facts">
        <dt>Base URL</dt>
        <dd>
          <code>{provider.base_url}</code>
        </dd>
        <dt>API key</dt>
        <dd data-testid={`key-${provider.id}`}>
          {provider.api_key ? <code>{provider.api_key}</code> : <span className="muted">none</span>}
        </dd>
        <dt>Source</dt>
        <dd>
          {provider.source === "environment" ? "environment (OPENAI_BASE_URL, read-only here)" : "stored"}
          {provider.is_default
            ? (
              <>
                · <span className="chip">default</span>
              </>
            )
            : null}
        </dd>
        {Object.keys(provider.extra_headers).length > 0 ?
          (
            <>
              <dt>Extra headers</dt>
              <dd>
                {Object.entries(provider.extra_headers).map(([name, value]) => (
                  <div key={name}>
                    <code>{name}: {value}</code>
                  </div>
                ))}
              </dd>
            </>
          ) :
          null}
      </dl>
      <div aria-live="polite">
        {load.error ? <p role="alert" className="error">{load.error}</p> : null}
        {tested && models ?
          (
            models.upstream_error === null ?
              <StatusBadge state="ok" label={`Connected: the provider lists ${upstreamCount} model${upstreamCount === 1 ? "" : "s"}`} /> :
              <StatusBadge state="bad" label={`Connection failed: ${models.upstream_error}`} />
          ) :
          null}
      </div>
      {models ? <ModelsTable list={models} /> : null}
    </Section>
  )
}

const ProvidersPage = ({ auth }: PageProps) => {
  const providers = useLoad(() => auth.call((client) => client.providers.list()), [auth])
  /** The dialog open: "new", a provider edited, or none. */
  const [dialog, setDialog] = useState<"new" | ProviderView | undefined>()
  const [deleting, setDeleting] = useState<ProviderView | undefined>()
  const remove = useAction()
  const canCreate = allows(auth, ["providers", "create"])
  const canUpdate = allows(auth, ["providers", "update"])
  const canDelete = allows(auth, ["providers", "delete"])

  const confirmDelete = async () => {
    const provider = deleting
    if (!provider) return
    const done = await remove.run(() => auth.call((client) => client.providers.delete({ path: { id: provider.id } })).then(() => true))
    if (done) {
      setDeleting(undefined)
      await providers.reload()
    }
  }

  return (
    <Page
      title="Providers and models"
      loading={providers.loading}
      error={providers.error}
      actions={canCreate ? <button type="button" className="primary" onClick={() => setDialog("new")}>Add provider</button> : null}
    >
      <p className="muted">OpenAI-compatible LLM servers. Keys are stored encrypted and only ever shown masked.</p>
      {(providers.data?.providers ?? []).map((provider) => {
        const stored = provider.source === "stored"
        return (
          <ProviderCard
            key={provider.id}
            auth={auth}
            provider={provider}
            onEdit={canUpdate && stored ? () => setDialog(provider) : undefined}
            onDelete={canDelete && stored && !provider.is_default ? () => setDeleting(provider) : undefined}
          />
        )
      })}
      {dialog !== undefined ?
        (
          <ProviderDialog
            key={dialog === "new" ? "new" : dialog.id}
            auth={auth}
            editing={dialog === "new" ? undefined : dialog}
            open
            onClose={() => setDialog(undefined)}
            onSaved={() => void providers.reload()}
          />
        ) :
        null}
      <ConfirmDialog
        open={deleting !== undefined}
        title="Delete provider"
        message={
          <>
            Delete <strong>{deleting?.id}</strong>? Bots using its models stop working until they are moved to another.
          </>
        }
        confirmLabel="Delete"
        busy={remove.busy}
        error={remove.error}
        onConfirm={() => void confirmDelete()}
        onClose={() => {
          setDeleting(undefined)
          remove.setError(undefined)
        }}
      />
    </Page>
  )
}

export default ProvidersPage
