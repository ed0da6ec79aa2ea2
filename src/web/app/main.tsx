/**
 * The app's entry: which page the sign-in state calls for (first-admin setup, sign-in, or the signed-in
 * shell), under client-side routing (the server answers every app path with the app).
 */
import { StrictMode, useEffect, useState, useSyncExternalStore } from "react"
import { createRoot } from "react-dom/client"
import { describeError, runCall } from "../shared/calls.ts"
import { AuthSession, clientWith } from "../shared/session.ts"
import { Invite } from "./Invite.tsx"
import { usePath } from "./route.ts"
import { Shell } from "./Shell.tsx"
import { type AuthStatusView, SignIn } from "./SignIn.tsx"
import "./styles.css"

const auth = new AuthSession() // Exposed for the end-to-end tests, which read how many silent refreshes happened.
;(window as unknown as { cairnAuth: AuthSession }).cairnAuth = auth

const useSignedIn = () => useSyncExternalStore((listener) => auth.subscribe(listener), () => auth.user)

const App = () => {
  const user = useSignedIn()
  const path = usePath()
  const [status, setStatus] = useState<AuthStatusView | undefined>()
  const [problem, setProblem] = useState<string | undefined>()
  const [starting, setStarting] = useState(true)

  useEffect(() => {
    // A returning user (or one back from the identity provider) has a refresh cookie: sign in silently.
    void auth.refresh().finally(() => setStarting(false))
  }, [])
  useEffect(() => {
    if (user || starting) return
    clientWith(() => undefined)
      .then((client) => runCall(client.auth.status()))
      .then(setStatus, (error: unknown) => setProblem(describeError(error)))
  }, [user, starting])

  // A one-time link (an invitation, a password reset) is opened signed in or not.
  const invite = /^\/invite\/([^/]+)$/.exec(path)?.[1]
  if (invite !== undefined && !starting) return <Invite token={decodeURIComponent(invite)} auth={auth} />
  if (problem) {
    return (
      <main className="centered">
        <p role="alert">{problem}</p>
      </main>
    )
  }
  if (starting || (!user && !status)) {
    return (
      <main className="centered" aria-busy="true">
        <p>Loading…</p>
      </main>
    )
  }
  if (!user) return <SignIn status={status!} auth={auth} onStatus={setStatus} />
  return <Shell auth={auth} path={path} />
}

createRoot(document.getElementById("root")!).render(
  <StrictMode>
    <App />
  </StrictMode>
)
