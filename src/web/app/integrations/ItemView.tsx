/**
 * A sidebar item's answer inside the console: the item's route is called with the session's token
 * and its answer shown as indented JSON; an HTML answer is shown in a sandboxed frame (no script,
 * an opaque origin: it cannot read the console or call the API as the user); other text as text.
 */
import type { AuthSession } from "../../shared/session.ts"
import { useLoad } from "../ui/useLoad.ts"
import { fetchRoute, isLocalPath, refusal } from "./routeFetch.ts"

type Answer =
  | { readonly kind: "json"; readonly text: string }
  | { readonly kind: "html"; readonly html: string }
  | { readonly kind: "text"; readonly text: string }

const read = async (auth: AuthSession, href: string): Promise<Answer> => {
  const response = await fetchRoute(auth, href)
  if (!response.ok) throw new Error(await refusal(response))
  const type = response.headers.get("content-type") ?? ""
  if (type.includes("json")) return { kind: "json", text: JSON.stringify(await response.json(), null, 2) }
  if (type.includes("text/html")) return { kind: "html", html: await response.text() }
  return { kind: "text", text: await response.text() }
}

export const ItemView = ({ auth, href }: { readonly auth: AuthSession; readonly href: string }) => {
  const { data, error, loading, reload } = useLoad(async () => (isLocalPath(href) ? read(auth, href) : undefined), [auth, href])
  if (!isLocalPath(href)) {
    return (
      <p>
        This item opens another site: <a href={href} target="_blank" rel="noreferrer noopener">{href}</a>
      </p>
    )
  }
  return (
    <div className="stack" data-testid="integration-item" aria-busy={loading || undefined}>
      <div className="row">
        <code className="muted">GET {href}</code>
        <span className="spacer" />
        <button type="button" className="small" onClick={() => void reload()} disabled={loading}>Refresh</button>
      </div>
      {error ? <p role="alert" className="error">{error}</p> : null}
      {data?.kind === "html" ?
        <iframe className="item-frame" title={`Answer of ${href}`} sandbox="" srcDoc={data.html} /> :
        data ?
        <pre className="item-answer" aria-label={`Answer of ${href}`}>{data.text}</pre> :
        null}
    </div>
  )
}
