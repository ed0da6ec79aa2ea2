/**
 * The one-time links made so far (invitations and password resets): masked to their first
 * characters, with their state and expiry; a pending one can be withdrawn.
 */
import type { InvitationList, InvitationView } from "../../../access/users/Model.ts"
import type { AuthSession } from "../../shared/session.ts"
import { ConfirmDialog } from "../ui/Dialog.tsx"
import { Section, StatusBadge, When } from "../ui/Page.tsx"
import { scrollRegion } from "../ui/scrollRegion.ts"
import { type Loaded, useConfirm } from "../ui/useLoad.ts"

const badge = { pending: "ok", used: "off", expired: "warn" } as const

const describe = (link: InvitationView) => link.kind === "invitation" ? `Invitation (${link.role})` : "Password reset"

export const InvitationsSection = ({ auth, links, canWrite }: {
  readonly auth: AuthSession
  readonly links: Loaded<InvitationList>
  readonly canWrite: boolean
}) => {
  const withdrawing = useConfirm(
    (link: InvitationView) => auth.call((client) => client.users.withdrawInvitation({ path: { id: link.id } })),
    () => links.reload()
  )
  const list = links.data?.invitations ?? []
  return (
    <Section title="Invitation and reset links">
      {links.error ? <p role="alert" className="error">{links.error}</p> : null}
      {list.length === 0 && !links.loading ? <p className="empty">No links yet.</p> : null}
      {list.length > 0 ?
        (
          <div {...scrollRegion}>
            <table className="data" aria-label="Invitation and reset links">
              <thead>
                <tr>
                  <th>Link</th>
                  <th>For</th>
                  <th>State</th>
                  <th>Expires</th>
                  {canWrite ?
                    (
                      <th>
                        <span className="visually-hidden">Actions</span>
                      </th>
                    ) :
                    null}
                </tr>
              </thead>
              <tbody>
                {list.map((link) => (
                  <tr key={link.id}>
                    <td>
                      {describe(link)} <code>{link.prefix}…</code>
                    </td>
                    <td>{link.username ?? link.username_hint ?? <span className="muted">anyone with the link</span>}</td>
                    <td>
                      <StatusBadge state={badge[link.status]} label={link.status} />
                    </td>
                    <td>
                      <When at={link.expires_at.toISOString()} />
                    </td>
                    {canWrite ?
                      (
                        <td>
                          <button type="button" className="small" onClick={() => withdrawing.ask(link)}>
                            {link.status === "pending" ? "Withdraw" : "Remove"}
                            <span className="visually-hidden">{link.prefix}</span>
                          </button>
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
      <ConfirmDialog
        {...withdrawing.dialog}
        title="Withdraw link"
        message={
          <>
            Withdraw the link <code>{withdrawing.target?.prefix}…</code>? It stops working at once.
          </>
        }
        confirmLabel="Withdraw"
      />
    </Section>
  )
}
