/**
 * First-admin setup (while the server has no user) and sign-in: username and password, and the
 * OpenID Connect button when the server has a provider configured. Tokens arrive through the
 * session (`AuthSession.adopt`); the refresh token never reaches this page's script.
 */
import { type FormEvent, useId, useState } from "react"
import { formErrors, runCall } from "../shared/calls.ts"
import { type AuthSession, clientWith } from "../shared/session.ts"

export interface AuthStatusView {
  readonly setup_required: boolean
  readonly setup_credential: "api_key" | "setup_code"
  readonly local_login: boolean
  readonly oidc_enabled: boolean
}

interface Props {
  readonly status: AuthStatusView
  readonly auth: AuthSession
  readonly onStatus: (status: AuthStatusView) => void
}

/** A field with its hint and, after a refused attempt, what was wrong with it (next to it, and read out with it). */
const Field = (
  props: {
    label: string
    name: string
    type?: string
    value: string
    onChange: (v: string) => void
    autoComplete?: string
    hint?: string
    error?: string | undefined
  }
) => {
  const hint = useId()
  const problem = useId()
  const described = [props.hint ? hint : undefined, props.error ? problem : undefined].filter(Boolean).join(" ")
  return (
    <label className="field">
      <span>{props.label}</span>
      <input
        name={props.name}
        type={props.type ?? "text"}
        value={props.value}
        autoComplete={props.autoComplete}
        required
        aria-invalid={props.error ? true : undefined}
        aria-describedby={described || undefined}
        onChange={(event) => props.onChange(event.target.value)}
      />
      {props.hint ? <small id={hint}>{props.hint}</small> : null}
      {props.error ? <small id={problem} className="error field-error">{props.error}</small> : null}
    </label>
  )
}

export const SignIn = ({ status, auth }: Props) => {
  const [username, setUsername] = useState("")
  const [password, setPassword] = useState("")
  const [credential, setCredential] = useState("")
  const [error, setError] = useState<string | undefined>()
  const [fieldErrors, setFieldErrors] = useState<Readonly<Record<string, string>>>({})
  const [busy, setBusy] = useState(false)
  const setup = status.setup_required

  const submit = async (event: FormEvent) => {
    event.preventDefault()
    setBusy(true)
    setError(undefined)
    setFieldErrors({})
    try {
      // Setup authenticates with the server's API_KEY or setup code, not with a user token.
      const client = await clientWith(() => (setup ? credential : undefined))
      const pair = setup
        ? await runCall(client.auth.setup({ payload: { username, password } }))
        : await runCall(client.auth.login({ payload: { username, password } }))
      await auth.adopt(pair)
    } catch (failure) {
      const { byField, other } = formErrors(failure, ["username", "password"])
      setFieldErrors(byField)
      setError(other)
    } finally {
      setBusy(false)
    }
  }

  return (
    <main className="centered">
      <form className="card signin" onSubmit={(event) => void submit(event)} aria-labelledby="signin-title">
        <h1 id="signin-title">{setup ? "Create the first admin" : "Sign in to Cairn"}</h1>
        {setup ?
          (
            <p className="muted">
              No user exists yet. The account you create here is the server's administrator.
            </p>
          ) :
          null}
        {setup ?
          (
            <Field
              label={status.setup_credential === "api_key" ? "Server API key" : "Setup code"}
              name="credential"
              type="password"
              value={credential}
              onChange={setCredential}
              autoComplete="off"
              hint={status.setup_credential === "api_key"
                ? "The API_KEY the server was started with."
                : "The code the server printed to its log at start."}
            />
          ) :
          null}
        {setup || status.local_login ?
          (
            <>
              <Field
                label="Username"
                name="username"
                value={username}
                onChange={setUsername}
                autoComplete="username"
                error={fieldErrors.username}
              />
              <Field
                label="Password"
                name="password"
                type="password"
                value={password}
                onChange={setPassword}
                autoComplete={setup ? "new-password" : "current-password"}
                error={fieldErrors.password}
                {...(setup ? { hint: "At least 8 characters." } : {})}
              />
              {error ? <p role="alert" className="error">{error}</p> : null}
              <button type="submit" className="primary" disabled={busy}>
                {setup ? "Create admin and sign in" : "Sign in"}
              </button>
            </>
          ) :
          null}
        {!setup && status.oidc_enabled ?
          (
            // A navigation, not a fetch: the provider's pages need the whole window.
            <a className="button" href="/auth/oidc/start?app=1">Sign in with single sign-on</a>
          ) :
          null}
      </form>
    </main>
  )
}
