/**
 * One provider on the providers page: its type, base URL, masked key, source and extra headers,
 * with Test connection, Models (the listing, where a listed model is added in one click), Edit and
 * Delete.
 */
import { useState } from "react"
import type { ProviderView } from "../../../providers/Model.ts"
import type { AuthSession } from "../../shared/session.ts"
import { Section } from "../ui/Page.tsx"
import { typeLabels } from "./PresetPicker.tsx"
import { ProviderModels } from "./ProviderModels.tsx"

const Facts = ({ provider }: { readonly provider: ProviderView }) => (
  <dl className="facts">
    <dt>Type</dt>
    <dd data-testid={`type-${provider.id}`}>
      {typeLabels[provider.type]} <span className="chip">{provider.type}</span>
    </dd>
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
            {" · "}
            <span className="chip">default</span>
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
)

/** What the card shows below its facts: nothing, the model list, or a connection test. */
type View = "none" | "models" | "test"

export const ProviderCard = ({ auth, provider, showModels, onEdit, onDelete, onChanged }: {
  readonly auth: AuthSession
  readonly provider: ProviderView
  /** The model list open from the start (a provider just added). */
  readonly showModels: boolean
  readonly onEdit: (() => void) | undefined
  readonly onDelete: (() => void) | undefined
  /** Given (the user may edit it): listed models can be added to the provider. */
  readonly onChanged: ((saved: ProviderView) => void) | undefined
}) => {
  const [view, setView] = useState<View>(showModels ? "models" : "none")
  /** Each test reads the list afresh. */
  const [round, setRound] = useState(0)
  const test = () => {
    setView("test")
    setRound(round + 1)
  }
  return (
    <Section
      title={provider.id}
      actions={
        <>
          <button type="button" className="small" onClick={test}>Test connection</button>
          <button
            type="button"
            className="small"
            aria-expanded={view === "models"}
            onClick={() => setView(view === "models" ? "none" : "models")}
          >
            {view === "models" ? "Hide models" : "Models"}
          </button>
          {onEdit ? <button type="button" className="small" onClick={onEdit}>Edit</button> : null}
          {onDelete ? <button type="button" className="small" onClick={onDelete}>Delete</button> : null}
        </>
      }
    >
      <Facts provider={provider} />
      {view === "none" ?
        null :
        <ProviderModels key={`${view}-${round}`} auth={auth} provider={provider} asTest={view === "test"} onChanged={onChanged} />}
    </Section>
  )
}
