/**
 * A provider's models (`GET /api/v1/admin/providers/{id}/models`): those configured here and those
 * the provider lists, with their prices, and why the provider's own list is missing when it could
 * not be reached. A listed model not configured yet is added to the provider's configured models
 * in one click (the provider read afresh and saved with it, its key and headers kept).
 */
import { Effect } from "effect"
import { useEffect, useRef, useState } from "react"
import type { ModelEntry, ModelList, ProviderView } from "../../../providers/Model.ts"
import type { AuthSession } from "../../shared/session.ts"
import { StatusBadge } from "../ui/Page.tsx"
import { scrollRegion } from "../ui/scrollRegion.ts"
import { useAction, useLoad } from "../ui/useLoad.ts"

const price = (value: number | null) => (value === null ? <span className="muted">unknown</span> : `$${value}`)

const ModelsTable = ({ list, onAdd, busy }: {
  readonly list: ModelList
  /** Given: a model not configured yet has an Add button. */
  readonly onAdd: ((model: ModelEntry) => void) | undefined
  readonly busy: boolean
}) =>
  list.models.length === 0 ? <p className="muted">No models.</p> : (
    <div {...scrollRegion}>
      <table className="data" aria-label={`Models of ${list.provider_id}`}>
        <thead>
          <tr>
            <th>Model</th>
            <th className="num">Input / M tokens</th>
            <th className="num">Output / M tokens</th>
            <th>Listed by</th>
            {onAdd ? <th>Configured</th> : null}
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
              {onAdd ?
                (
                  <td>
                    {model.sources.includes("configured") ? <span className="muted">yes</span> : (
                      <button
                        type="button"
                        className="small"
                        disabled={busy}
                        aria-label={`Add ${model.model} to the configured models`}
                        onClick={() => onAdd(model)}
                      >
                        Add
                      </button>
                    )}
                  </td>
                ) :
                null}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  )

/** The listing's state line: the connection test's verdict, or why the provider's own list is missing. */
const Verdict = ({ list, asTest }: { readonly list: ModelList; readonly asTest: boolean }) => {
  const upstream = list.models.filter((m) => m.sources.includes("upstream")).length
  if (list.upstream_error !== null) {
    return asTest
      ? <StatusBadge state="bad" label={`Connection failed: ${list.upstream_error}`} />
      : (
        <p className="small-text">
          <StatusBadge state="warn" label="The provider could not be reached" /> {list.upstream_error}
          <span className="muted">{" "}Only the models configured here are listed.</span>
        </p>
      )
  }
  return asTest ? <StatusBadge state="ok" label={`Connected: the provider lists ${upstream} model${upstream === 1 ? "" : "s"}`} /> : null
}

export const ProviderModels = ({ auth, provider, asTest, onChanged }: {
  readonly auth: AuthSession
  readonly provider: ProviderView
  /** Shown as a connection test (its verdict), or as the model list. */
  readonly asTest: boolean
  /** Given (the user may edit this provider): models can be added; called with the provider as saved. */
  readonly onChanged: ((saved: ProviderView) => void) | undefined
}) => {
  const id = provider.id
  /** What the listing depends on: read again when the provider is saved (an edit, a model added). */
  const settings = JSON.stringify([provider.type, provider.base_url, provider.api_key, provider.models])
  const list = useLoad(() => auth.call((client) => client.providers.models({ path: { id } })), [auth, id, settings])
  const add = useAction()
  /** The model just added, said (and focused: its Add button is gone) so a keyboard user knows where they are. */
  const [added, setAdded] = useState<string | undefined>()
  const said = useRef<HTMLParagraphElement>(null)
  useEffect(() => said.current?.focus(), [added])
  const addModel = async (model: ModelEntry) => {
    const saved = await add.run(() =>
      auth.call((client) =>
        Effect.flatMap(
          client.providers.get({ path: { id } }),
          (current) =>
            current.models.some((configured) => configured.id === model.model) ? Effect.succeed(current) : client.providers.update({
              path: { id },
              payload: {
                type: current.type,
                base_url: current.base_url,
                extra_headers: current.extra_headers,
                models: [...current.models, {
                  id: model.model,
                  input_price_per_million: null,
                  output_price_per_million: null,
                  cache_read_price_per_million: null,
                  cache_write_price_per_million: null,
                  vision: null
                }]
              }
            })
        )
      )
    )
    if (saved) {
      setAdded(model.model)
      onChanged?.(saved)
    }
  }
  return (
    <div className="stack" aria-busy={list.loading || add.busy || undefined}>
      <div aria-live="polite">
        {list.error ? <p role="alert" className="error">{list.error}</p> : null}
        {add.error ? <p role="alert" className="error">{add.error}</p> : null}
        {added ? <p ref={said} tabIndex={-1} className="small-text announce">Added {added} to the configured models.</p> : null}
        {list.data ? <Verdict list={list.data} asTest={asTest} /> : list.loading ? <p className="muted">Reading the models…</p> : null}
      </div>
      {list.data ?
        <ModelsTable list={list.data} busy={add.busy} onAdd={onChanged ? (model) => void addModel(model) : undefined} /> :
        null}
    </div>
  )
}
