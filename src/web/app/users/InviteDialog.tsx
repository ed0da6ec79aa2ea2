/**
 * Inviting a user: the role they get, a username to suggest and how long the link lasts. The link
 * is shown once, in this dialog (Cairn keeps only a hash of its token); closing it drops it.
 */
import { useState } from "react"
import type { Role } from "../../../access/users/Model.ts"
import { formErrors } from "../../shared/calls.ts"
import type { AuthSession } from "../../shared/session.ts"
import { allows } from "../scopes.ts"
import { CopyValue } from "../ui/Copy.tsx"
import { Dialog } from "../ui/Dialog.tsx"
import { Select, TextField } from "../ui/Field.tsx"
import { useAction } from "../ui/useLoad.ts"
import { expiryChoices, linkUrl } from "./linkUrl.ts"

export const InviteDialog = ({ auth, open, onClose, onCreated }: {
  readonly auth: AuthSession
  readonly open: boolean
  readonly onClose: () => void
  readonly onCreated: () => void
}) => {
  const [role, setRole] = useState<Role>("member")
  const [hint, setHint] = useState("")
  const [hours, setHours] = useState("72")
  const [link, setLink] = useState<string | undefined>()
  const [fieldErrors, setFieldErrors] = useState<Readonly<Record<string, string>>>({})
  const action = useAction()
  const close = () => {
    setRole("member")
    setHint("")
    setHours("72")
    setLink(undefined)
    setFieldErrors({})
    action.setError(undefined)
    onClose()
  }
  const create = async () => {
    setFieldErrors({})
    try {
      const made = await auth.call((client) =>
        client.users.invite({
          payload: { role, username_hint: hint.trim() === "" ? null : hint.trim(), expires_in_hours: Number(hours) }
        })
      )
      setLink(linkUrl(made.path))
      onCreated()
    } catch (failure) {
      const { byField, other } = formErrors(failure, ["role", "username_hint", "expires_in_hours"])
      setFieldErrors(byField)
      action.setError(other)
    }
  }
  if (link) {
    return (
      <Dialog title="Invitation link" open={open} onClose={close}>
        <p>
          Send this link to the person you invite. It works once, and is shown only now: Cairn keeps only a hash of it.
        </p>
        <CopyValue value={link} label="Invitation link" />
      </Dialog>
    )
  }
  // Only an admin may invite an admin (the server checks it too).
  const roles = allows(auth, "admin") ? ["member", "admin"] : ["member"]
  return (
    <Dialog
      title="Invite user"
      open={open}
      onClose={close}
      onSubmit={() => void create()}
      submitLabel="Create link"
      error={action.error}
    >
      <Select
        label="Role"
        value={role}
        onChange={(value) => setRole(value as Role)}
        options={roles.map((value) => ({ value, label: value }))}
        description="An admin can do everything; a member chats."
        error={fieldErrors.role}
      />
      <TextField
        label="Suggested username"
        value={hint}
        onChange={setHint}
        description="Optional: filled in for them; they may change it."
        error={fieldErrors.username_hint}
      />
      <Select
        label="Link expires after"
        value={hours}
        onChange={setHours}
        options={expiryChoices}
        error={fieldErrors.expires_in_hours}
      />
    </Dialog>
  )
}
