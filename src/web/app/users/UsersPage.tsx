/**
 * Users: who can sign in, with their role, state, last sign-in and creation; changing a role,
 * disabling or enabling, a new password (set here, or a one-time reset link), deleting (after a
 * confirmation); inviting by a one-time link, and the links not yet used. Reading needs
 * `users:read`; each control shows only when the user's scopes allow its call (`users:write`).
 */
import { useState } from "react"
import type { UpdateUser, UserView } from "../../../access/users/Model.ts"
import type { PageProps } from "../pages.ts"
import { allows } from "../scopes.ts"
import { ConfirmDialog } from "../ui/Dialog.tsx"
import { Page, StatusBadge, When } from "../ui/Page.tsx"
import { scrollRegion } from "../ui/scrollRegion.ts"
import { useAction, useConfirm, useLoad } from "../ui/useLoad.ts"
import { InvitationsSection } from "./Invitations.tsx"
import { InviteDialog } from "./InviteDialog.tsx"
import { PasswordDialog } from "./PasswordDialog.tsx"

interface RowActions {
  readonly self: boolean
  readonly canWrite: boolean
  readonly busy: boolean
  readonly onUpdate: (user: UserView, changes: UpdateUser, done: string) => void
  readonly onPassword: (user: UserView) => void
  readonly onDelete: (user: UserView) => void
}

const UserRow = ({ user, actions }: { readonly user: UserView; readonly actions: RowActions }) => (
  <tr data-user-id={user.id}>
    <td>
      <strong>{user.username}</strong>
      {actions.self ? <span className="muted">{" (you)"}</span> : null}
      {user.email ? <div className="muted">{user.email}</div> : null}
    </td>
    <td>
      {actions.canWrite && !actions.self ?
        (
          <select
            aria-label={`Role of ${user.username}`}
            value={user.role}
            disabled={actions.busy}
            onChange={(event) =>
              actions.onUpdate(user, { role: event.target.value as UserView["role"] }, `${user.username} is now ${event.target.value}.`)}
          >
            <option value="member">member</option>
            <option value="admin">admin</option>
          </select>
        ) :
        user.role}
    </td>
    <td>{user.disabled ? <StatusBadge state="off" label="disabled" /> : <StatusBadge state="ok" label="active" />}</td>
    <td>
      <When at={user.last_login_at?.toISOString()} />
    </td>
    <td>
      <When at={user.created_at.toISOString()} />
    </td>
    {actions.canWrite ?
      (
        <td>
          <div className="row">
            {actions.self ? null : (
              <button
                type="button"
                className="small"
                disabled={actions.busy}
                onClick={() =>
                  actions.onUpdate(
                    user,
                    { disabled: !user.disabled },
                    user.disabled ? `${user.username} can sign in again.` : `${user.username} is disabled and signed out.`
                  )}
              >
                {user.disabled ? "Enable" : "Disable"}
                <span className="visually-hidden">{user.username}</span>
              </button>
            )}
            <button type="button" className="small" onClick={() => actions.onPassword(user)}>
              Password<span className="visually-hidden">of {user.username}</span>
            </button>
            {actions.self ? null : (
              <button type="button" className="small danger" onClick={() => actions.onDelete(user)}>
                Delete<span className="visually-hidden">{user.username}</span>
              </button>
            )}
          </div>
        </td>
      ) :
      null}
  </tr>
)

const UsersTable = (
  { users, actions }: {
    readonly users: ReadonlyArray<UserView>
    readonly actions: Omit<RowActions, "self"> & { readonly me: string | undefined }
  }
) => (
  <div {...scrollRegion}>
    <table className="data" aria-label="Users">
      <thead>
        <tr>
          <th>User</th>
          <th>Role</th>
          <th>State</th>
          <th>Last sign-in</th>
          <th>Created</th>
          {actions.canWrite ?
            (
              <th>
                <span className="visually-hidden">Actions</span>
              </th>
            ) :
            null}
        </tr>
      </thead>
      <tbody>
        {users.map((user) => <UserRow key={user.id} user={user} actions={{ ...actions, self: user.id === actions.me }} />)}
      </tbody>
    </table>
  </div>
)

const UsersPage = ({ auth }: PageProps) => {
  const users = useLoad(() => auth.call((client) => client.users.list()), [auth])
  const links = useLoad(() => auth.call((client) => client.users.invitations()), [auth])
  const canWrite = allows(auth, ["users", "update"])
  const [inviting, setInviting] = useState(false)
  const [passwordFor, setPasswordFor] = useState<UserView | undefined>()
  const [notice, setNotice] = useState<string | undefined>()
  const change = useAction()
  const deleting = useConfirm(
    (user: UserView) => auth.call((client) => client.users.delete({ path: { id: user.id } })),
    () => users.reload()
  )
  const update = async (user: UserView, changes: UpdateUser, done: string) => {
    setNotice(undefined)
    const answer = await change.run(() => auth.call((client) => client.users.update({ path: { id: user.id }, payload: changes })))
    if (answer) setNotice(done)
    await users.reload()
  }
  const list = users.data?.users ?? []
  return (
    <Page
      title="Users"
      loading={users.loading}
      error={users.error ?? change.error}
      actions={canWrite ? <button type="button" className="primary" onClick={() => setInviting(true)}>Invite user</button> : null}
    >
      <p className="muted">
        People who sign in to Cairn. An admin can do everything; a member chats and manages their own sessions. Invite someone with a
        one-time link: they choose their own username and password.
      </p>
      {notice ? <p role="status">{notice}</p> : null}
      {list.length > 0 ?
        (
          <UsersTable
            users={list}
            actions={{
              me: auth.user?.id,
              canWrite,
              busy: change.busy,
              onUpdate: (user, changes, done) => void update(user, changes, done),
              onPassword: setPasswordFor,
              onDelete: deleting.ask
            }}
          />
        ) :
        null}
      <InvitationsSection auth={auth} links={links} canWrite={canWrite} />
      <InviteDialog auth={auth} open={inviting} onClose={() => setInviting(false)} onCreated={() => void links.reload()} />
      <PasswordDialog auth={auth} user={passwordFor} onClose={() => setPasswordFor(undefined)} onChanged={() => void links.reload()} />
      <ConfirmDialog
        {...deleting.dialog}
        title="Delete user"
        message={
          <>
            Delete{" "}
            <strong>{deleting.target?.username}</strong>? They are signed out everywhere, the API keys they made are revoked, and they
            cannot sign in again. This cannot be undone.
          </>
        }
        confirmLabel="Delete"
      />
    </Page>
  )
}

export default UsersPage
