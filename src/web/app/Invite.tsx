/**
 * A one-time link opened (`/invite/<token>`): for an invitation, the new user chooses a username
 * (the suggested one filled in) and a password; for a reset link, its user a new password. The link
 * is spent by the server, which signs the user in (the tokens arrive as at sign-in, through
 * `AuthSession.adopt`); a used or expired link says so and offers the sign-in page.
 */
import { type FormEvent, useEffect, useState } from "react"
import type { InvitationOffer } from "../../access/users/Model.ts"
import { describeError, formErrors, runCall } from "../shared/calls.ts"
import { type AuthSession, clientWith } from "../shared/session.ts"
import { navigate } from "./route.ts"
import { TextField } from "./ui/Field.tsx"

const useOffer = (token: string) => {
  const [offer, setOffer] = useState<InvitationOffer | undefined>()
  const [problem, setProblem] = useState<string | undefined>()
  useEffect(() => {
    clientWith(() => undefined)
      .then((client) => runCall(client.auth.invitation({ path: { token } })))
      .then(setOffer, (error: unknown) => setProblem(describeError(error)))
  }, [token])
  return { offer, problem }
}

const InviteForm = ({ token, offer, auth }: { readonly token: string; readonly offer: InvitationOffer; readonly auth: AuthSession }) => {
  const [username, setUsername] = useState(offer.username_hint ?? "")
  const [password, setPassword] = useState("")
  const [repeat, setRepeat] = useState("")
  const [errors, setErrors] = useState<Readonly<Record<string, string>>>({})
  const [other, setOther] = useState<string | undefined>()
  const [busy, setBusy] = useState(false)
  const reset = offer.kind === "password_reset"
  const submit = async (event: FormEvent) => {
    event.preventDefault()
    setErrors({})
    setOther(undefined)
    if (password !== repeat) return setErrors({ repeat: "The two passwords are not the same." })
    setBusy(true)
    try {
      const client = await clientWith(() => undefined)
      const payload = reset ? { password } : { username, password }
      await auth.adopt(await runCall(client.auth.acceptInvitation({ path: { token }, payload })))
      navigate("/", { replace: true })
    } catch (failure) {
      const split = formErrors(failure, ["username", "password", "repeat"])
      setErrors(split.byField)
      setOther(split.other)
    } finally {
      setBusy(false)
    }
  }
  return (
    <form className="card signin stack" onSubmit={(event) => void submit(event)} aria-labelledby="invite-title">
      <h1 id="invite-title">{reset ? "Choose a new password" : "Join Cairn"}</h1>
      <p className="muted">
        {reset
          ? (
            <>
              For <strong>{offer.username}</strong>. Your other sessions are signed out.
            </>
          )
          : <>You are invited as {offer.role === "admin" ? "an admin" : "a member"}. Choose how you sign in.</>}
      </p>
      {reset ?
        null :
        (
          <TextField
            label="Username"
            name="username"
            required
            autoComplete="username"
            value={username}
            onChange={setUsername}
            error={errors.username}
          />
        )}
      <TextField
        label="Password"
        name="password"
        type="password"
        required
        autoComplete="new-password"
        value={password}
        onChange={setPassword}
        description="At least 8 characters."
        error={errors.password}
      />
      <TextField
        label="Password again"
        name="repeat"
        type="password"
        required
        autoComplete="new-password"
        value={repeat}
        onChange={setRepeat}
        error={errors.repeat}
      />
      {other ? <p role="alert" className="error">{other}</p> : null}
      <button type="submit" className="primary" disabled={busy}>{reset ? "Set password and sign in" : "Create account and sign in"}</button>
    </form>
  )
}

export const Invite = ({ token, auth }: { readonly token: string; readonly auth: AuthSession }) => {
  const { offer, problem } = useOffer(token)
  return (
    <main className="centered">
      {offer ? <InviteForm token={token} offer={offer} auth={auth} /> : null}
      {problem ?
        (
          <div className="card signin stack">
            <h1>This link cannot be used</h1>
            <p role="alert">{problem}</p>
            <a className="button" href="/">Go to sign in</a>
          </div>
        ) :
        null}
      {!offer && !problem ? <p aria-busy="true">Loading…</p> : null}
    </main>
  )
}
