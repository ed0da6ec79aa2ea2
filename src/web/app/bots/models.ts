/**
 * The model ids a bot or a channel can name, as a chat names them: `<provider>/<model>`, the bare
 * id on the default provider (as the composer's picker lists them). Each provider's own listing
 * (its configured models and those its `/models` answers) is read; a provider whose listing fails
 * still offers its configured models.
 */
import type { AuthSession } from "../../shared/session.ts"
import { allows } from "../scopes.ts"

export const loadModelIds = async (auth: AuthSession): Promise<ReadonlyArray<string>> => {
  if (!allows(auth, ["providers", "list"])) return []
  const { providers } = await auth.call((client) => client.providers.list())
  const canList = allows(auth, ["providers", "models"])
  const perProvider = await Promise.all(
    providers.map(async (provider) => {
      const configured = provider.models.map((model) => (provider.is_default ? model.id : `${provider.id}/${model.id}`))
      if (!canList) return configured
      // The listing names each model by the id a request uses already.
      return auth.call((client) => client.providers.models({ path: { id: provider.id } })).then(
        (list) => [...configured, ...list.models.map((model) => model.id)],
        () => configured
      )
    })
  )
  return [...new Set(perProvider.flat())].sort()
}

/** Options for a model picker: "use the default" first, then the models, the current one kept even when no provider lists it. */
export const modelOptions = (models: ReadonlyArray<string>, current: string | null, none: string) => [
  { value: "", label: none },
  ...[...new Set([...(current ? [current] : []), ...models])].map((id) => ({ value: id, label: id }))
]
