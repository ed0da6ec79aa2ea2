import { Effect } from "effect"
import { StrictMode, useEffect, useState } from "react"
import { createRoot } from "react-dom/client"
import { makeFetchClient } from "../../client.ts"

/** Placeholder-free first screen: the server's health through the typed client. */
const App = () => {
  const [status, setStatus] = useState<string>("…")
  useEffect(() => {
    Effect.runPromise(
      makeFetchClient({ baseUrl: window.location.origin }).pipe(Effect.flatMap((client) => client.health.health()))
    ).then(
      (health) => setStatus(JSON.stringify(health)),
      (error: unknown) => setStatus(String(error))
    )
  }, [])
  return <main><h1>Cairn</h1><p data-testid="health">{status}</p></main>
}

createRoot(document.getElementById("root")!).render(<StrictMode><App /></StrictMode>)
