/**
 * Providers and models: the LLM providers (the environment's default one read-only), each with its
 * type and masked key, a connection test (the provider's own model list fetched with the stored
 * key), its models with their prices (a listed one added to the provider in one click), and adding
 * (from a preset), editing and deleting providers.
 */
import { useState } from "react"
import type { ProviderView } from "../../../providers/Model.ts"
import type { PageProps } from "../pages.ts"
import { allows } from "../scopes.ts"
import { ConfirmDialog } from "../ui/Dialog.tsx"
import { Page } from "../ui/Page.tsx"
import { useAction, useLoad } from "../ui/useLoad.ts"
import { ProviderCard } from "./ProviderCard.tsx"
import { ProviderDialog } from "./ProviderDialog.tsx"

const ProvidersPage = ({ auth }: PageProps) => {
  const providers = useLoad(() => auth.call((client) => client.providers.list()), [auth])
  /** The dialog open: "new", a provider edited, or none. */
  const [dialog, setDialog] = useState<"new" | ProviderView | undefined>()
  const [deleting, setDeleting] = useState<ProviderView | undefined>()
  /** The provider just added: its card opens with its models, to pick from. */
  const [added, setAdded] = useState<string | undefined>()
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
      <p className="muted">
        LLM servers: OpenAI-compatible ones (OpenAI, OpenRouter, Ollama, vLLM, …), Anthropic and Gemini. Keys are stored encrypted and only
        ever shown masked.
      </p>
      {(providers.data?.providers ?? []).map((provider) => {
        const stored = provider.source === "stored"
        return (
          <ProviderCard
            key={provider.id}
            auth={auth}
            provider={provider}
            showModels={provider.id === added}
            onEdit={canUpdate && stored ? () => setDialog(provider) : undefined}
            onDelete={canDelete && stored && !provider.is_default ? () => setDeleting(provider) : undefined}
            onChanged={canUpdate && stored ? () => void providers.reload() : undefined}
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
            onSaved={(saved) => {
              if (dialog === "new") setAdded(saved.id)
              void providers.reload()
            }}
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
