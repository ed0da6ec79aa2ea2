/**
 * API keys: the scoped keys with their scopes, last use and expiry; a new key (its value shown
 * once) and revoking one (after a confirmation). Each control shows only when the user's scopes
 * allow its call.
 */
import { useState } from "react"
import type { ApiKeyView } from "../../../access/keys/Model.ts"
import type { PageProps } from "../pages.ts"
import { allows } from "../scopes.ts"
import { ConfirmDialog } from "../ui/Dialog.tsx"
import { Page, StatusBadge, When } from "../ui/Page.tsx"
import { scrollRegion } from "../ui/scrollRegion.ts"
import { useAction, useLoad } from "../ui/useLoad.ts"
import { NewKeyDialog } from "./NewKeyDialog.tsx"

const statusBadge = { active: "ok", expired: "warn", revoked: "off" } as const

const KeysPage = ({ auth }: PageProps) => {
  const keys = useLoad(() => auth.call((client) => client.apiKeys.list()), [auth])
  const catalogue = useLoad(() => auth.call((client) => client.discover.scopes()), [auth])
  const [creating, setCreating] = useState(false)
  const [revoking, setRevoking] = useState<ApiKeyView | undefined>()
  const revoke = useAction()
  const canCreate = allows(auth, ["apiKeys", "create"])
  const canRevoke = allows(auth, ["apiKeys", "revoke"])

  const confirmRevoke = async () => {
    const key = revoking
    if (!key) return
    const done = await revoke.run(() => auth.call((client) => client.apiKeys.revoke({ path: { id: key.id } })))
    if (done) {
      setRevoking(undefined)
      await keys.reload()
    }
  }
  const list = keys.data?.keys ?? []

  return (
    <Page
      title="API keys"
      loading={keys.loading}
      error={keys.error ?? catalogue.error}
      actions={canCreate
        ? <button type="button" className="primary" disabled={!catalogue.data} onClick={() => setCreating(true)}>New key</button>
        : null}
    >
      <p className="muted">
        Scoped keys for clients and integrations. A key's value is shown once, when it is made; Cairn keeps only a hash.
      </p>
      {list.length === 0 && !keys.loading ? <p className="empty">No API keys yet.</p> : null}
      {list.length > 0 ?
        (
          <div {...scrollRegion}>
            <table className="data" aria-label="API keys">
              <thead>
                <tr>
                  <th>Name</th>
                  <th>Key</th>
                  <th>Scopes</th>
                  <th>Status</th>
                  <th>Last used</th>
                  <th>Expires</th>
                  <th>Created</th>
                  {canRevoke
                    ? (
                      <th>
                        <span className="visually-hidden">Actions</span>
                      </th>
                    )
                    : null}
                </tr>
              </thead>
              <tbody>
                {list.map((key) => (
                  <tr key={key.id} data-key-id={key.id}>
                    <td>{key.name}</td>
                    <td>
                      <code>{key.prefix}…</code>
                    </td>
                    <td>
                      <ul className="chips" aria-label={`Scopes of ${key.name}`}>
                        {key.scopes.map((scope) => <li key={scope} className="chip">{scope}</li>)}
                      </ul>
                    </td>
                    <td>
                      <StatusBadge state={statusBadge[key.status]} label={key.status} />
                    </td>
                    <td>
                      <When at={key.last_used_at?.toISOString()} />
                    </td>
                    <td>{key.expires_at ? <When at={key.expires_at.toISOString()} /> : <span className="muted">never</span>}</td>
                    <td>
                      <When at={key.created_at.toISOString()} />
                    </td>
                    {canRevoke ?
                      (
                        <td>
                          {key.status === "active" ?
                            (
                              <button type="button" className="small" aria-label={`Revoke ${key.name}`} onClick={() => setRevoking(key)}>
                                Revoke
                              </button>
                            ) :
                            null}
                        </td>
                      ) :
                      null}
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        ) :
        null}
      {catalogue.data ?
        (
          <NewKeyDialog
            auth={auth}
            catalogue={catalogue.data}
            open={creating}
            onClose={() => setCreating(false)}
            onCreated={() => void keys.reload()}
          />
        ) :
        null}
      <ConfirmDialog
        open={revoking !== undefined}
        title="Revoke key"
        message={
          <>
            Revoke <strong>{revoking?.name}</strong>? Clients using it are refused from then on. This cannot be undone.
          </>
        }
        confirmLabel="Revoke"
        busy={revoke.busy}
        error={revoke.error}
        onConfirm={() => void confirmRevoke()}
        onClose={() => {
          setRevoking(undefined)
          revoke.setError(undefined)
        }}
      />
    </Page>
  )
}

export default KeysPage
