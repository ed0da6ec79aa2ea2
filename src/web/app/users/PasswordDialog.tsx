/**
 * A user's password, changed by an admin: a one-time link for the user to choose a new one
 * (shown once), or a new password set here. Either ends the user's sessions.
 */
import { useState } from "react"
import type { UserView } from "../../../access/users/Model.ts"
import { formErrors } from "../../shared/calls.ts"
import type { AuthSession } from "../../shared/session.ts"
import { CopyValue } from "../ui/Copy.tsx"
import { Dialog } from "../ui/Dialog.tsx"
import { Select, TextField } from "../ui/Field.tsx"
import { useAction } from "../ui/useLoad.ts"
import { expiryChoices, linkUrl } from "./linkUrl.ts"

export const PasswordDialog = ({ auth, user, onClose, onChanged }: {
  readonly auth: AuthSession
  readonly user: UserView | undefined
  readonly onClose: () => void
  readonly onChanged: () => void
}) => {
  const [mode, setMode] = useState<"link" | "set">("link")
  const [password, setPassword] = useState("")
  const [hours, setHours] = useState("24")
  const [done, setDone] = useState<{ readonly link?: string; readonly text: string } | undefined>()
  const [fieldErrors, setFieldErrors] = useState<Readonly<Record<string, string>>>({})
  const action = useAction()
  const close = () => {
    setMode("link")
    setPassword("")
    setDone(undefined)
    setFieldErrors({})
    action.setError(undefined)
    onClose()
  }
  const submit = async () => {
    if (!user) return
    setFieldErrors({})
    try {
      if (mode === "link") {
        const made = await auth.call((client) =>
          client.users.resetLink({ path: { id: user.id }, payload: { expires_in_hours: Number(hours) } })
        )
        setDone({ link: linkUrl(made.path), text: `Send this link to ${user.username}. It works once, and is shown only now.` })
      } else {
        await auth.call((client) => client.users.update({ path: { id: user.id }, payload: { password } }))
        setDone({ text: `The password of ${user.username} is changed, and their sessions are signed out.` })
      }
      onChanged()
    } catch (failure) {
      const { byField, other } = formErrors(failure, ["password"])
      setFieldErrors(byField)
      action.setError(other)
    }
  }
  const title = `Password of ${user?.username ?? ""}`
  if (done) {
    return (
      <Dialog title={title} open={user !== undefined} onClose={close}>
        <p role="status">{done.text}</p>
        {done.link ? <CopyValue value={done.link} label="Password reset link" /> : null}
      </Dialog>
    )
  }
  return (
    <Dialog
      title={title}
      open={user !== undefined}
      onClose={close}
      onSubmit={() => void submit()}
      submitLabel={mode === "link" ? "Create reset link" : "Set password"}
      error={action.error}
    >
      <fieldset className="choice">
        <legend>How</legend>
        <label className="row">
          <input type="radio" name="password-mode" checked={mode === "link"} onChange={() => setMode("link")} />
          A one-time link: they choose the new password
        </label>
        <label className="row">
          <input type="radio" name="password-mode" checked={mode === "set"} onChange={() => setMode("set")} />
          Set a new password now, and tell them
        </label>
      </fieldset>
      {mode === "link"
        ? <Select label="Link expires after" value={hours} onChange={setHours} options={expiryChoices} />
        : (
          <TextField
            label="New password"
            type="password"
            autoComplete="new-password"
            required
            value={password}
            onChange={setPassword}
            description="At least 8 characters."
            error={fieldErrors.password}
          />
        )}
    </Dialog>
  )
}
