/**
 * The HUD: a channel bound to an integration with the HUD preset `default` shows that integration's
 * status widgets in the chat header. An integration offers a HUD by declaring its route in its SETUP
 * manifest (`hud: {status_endpoint}`, listed by `GET /api/v1/admin/integrations`); the route answers
 * `{items: [{id, kind: "status", title, badge: {state, label}, detail, actions}]}` for
 * `?channel_id=`. The messaging bridge's is its connection badge (not configured, connected, failing
 * or paused) with pause/resume.
 */
import { Either, Schema } from "effect"
import { useMemo } from "react"
import type { AuthSession } from "../../shared/session.ts"
import { allows } from "../scopes.ts"
import { StatusBadge } from "../ui/Page.tsx"
import { useAction, useLoad, usePoll } from "../ui/useLoad.ts"
import { HUD_POLL_MS } from "./polling.ts"
import { fetchRoute, isLocalPath, refusal } from "./routeFetch.ts"

const HudAction = Schema.Struct({ id: Schema.String, label: Schema.String, method: Schema.String, path: Schema.String })
const HudStatusItem = Schema.Struct({
  id: Schema.String,
  kind: Schema.Literal("status"),
  title: Schema.String,
  badge: Schema.Struct({ state: Schema.String, label: Schema.String }),
  detail: Schema.optionalWith(Schema.String, { default: () => "" }),
  actions: Schema.optionalWith(Schema.Array(HudAction), { default: () => [] })
})
type HudItem = typeof HudStatusItem.Type
const decodeItem = Schema.decodeUnknownEither(HudStatusItem)

/** A badge's state as a colour, in the status words (docs/integrations.md): not configured and paused are grey. */
export const badgeOf = (state: string): "ok" | "warn" | "bad" | "off" =>
  state === "connected"
    ? "ok"
    : state === "connecting" || state === "degraded"
    ? "warn"
    : state === "failing" || state === "disconnected"
    ? "bad"
    : "off"

/** The widgets a HUD route answers; an item of a kind this app does not draw is left out. */
const readHud = async (auth: AuthSession, endpoint: string, channelId: string): Promise<ReadonlyArray<HudItem>> => {
  const response = await fetchRoute(auth, `${endpoint}?channel_id=${encodeURIComponent(channelId)}`)
  if (!response.ok) throw new Error(await refusal(response))
  const body = (await response.json()) as { items?: unknown }
  return (Array.isArray(body.items) ? body.items : []).flatMap((item) => {
    const decoded = decodeItem(item)
    return Either.isRight(decoded) ? [decoded.right] : []
  })
}

const StatusWidget = (
  { auth, item, onChanged }: { readonly auth: AuthSession; readonly item: HudItem; readonly onChanged: () => Promise<void> }
) => {
  const action = useAction()
  const act = (target: HudItem["actions"][number]) =>
    action.run(async () => {
      const response = await fetchRoute(auth, target.path, { method: target.method })
      if (!response.ok) throw new Error(await refusal(response))
      await onChanged()
    })
  return (
    <div
      className="hud-widget"
      role="group"
      aria-label={item.title}
      data-testid={`hud-${item.id}`}
      data-state={item.badge.state}
      title={item.detail}
    >
      <span className="muted">{item.title}</span>
      <StatusBadge state={badgeOf(item.badge.state)} label={item.badge.label} />
      {item.actions.filter((target) => isLocalPath(target.path)).map((target) => (
        <button
          key={target.id}
          type="button"
          className="small"
          disabled={action.busy}
          onClick={() => void act(target)}
        >
          {target.label}
        </button>
      ))}
      {action.error ? <span role="alert" className="error small-text">{action.error}</span> : null}
    </div>
  )
}

const IntegrationHud = (
  { auth, endpoint, channelId }: { readonly auth: AuthSession; readonly endpoint: string; readonly channelId: string }
) => {
  const { data, error, reload } = useLoad(() => readHud(auth, endpoint, channelId), [auth, endpoint, channelId])
  usePoll(reload, HUD_POLL_MS)
  if (error) return <span className="muted small-text" title={error}>Status unavailable</span>
  return <>{(data ?? []).map((item) => <StatusWidget key={item.id} auth={auth} item={item} onChanged={reload} />)}</>
}

/** The HUDs of a channel: one per integration it is bound to with the preset `default` that offers one. */
export const ChannelHud = ({ auth, channelId }: { readonly auth: AuthSession; readonly channelId: string }) => {
  const permitted = allows(auth, ["bindings", "list"]) && allows(auth, ["integrations", "list"])
  const integrations = useLoad(async () => (permitted ? (await auth.call((client) => client.integrations.list())).integrations : []), [
    auth,
    permitted
  ])
  const bindings = useLoad(
    async () => (permitted ? (await auth.call((client) => client.bindings.list({ path: { id: channelId } }))).bindings : []),
    [auth, permitted, channelId]
  )
  const endpoints = useMemo(() => {
    const offered = new Map<string, string>()
    for (const integration of integrations.data ?? []) {
      if (integration.hud) offered.set(integration.metadata?.integration_type ?? integration.id, integration.hud.status_endpoint)
    }
    const wanted = (bindings.data ?? []).filter((binding) => binding.hud_preset === "default").map((binding) =>
      offered.get(binding.integration_type)
    )
    return [...new Set(wanted.filter((endpoint): endpoint is string => endpoint !== undefined && isLocalPath(endpoint)))]
  }, [integrations.data, bindings.data])
  if (endpoints.length === 0) return null
  return (
    <div className="hud" role="group" aria-label="Channel status" data-testid="hud">
      {endpoints.map((endpoint) => <IntegrationHud key={endpoint} auth={auth} endpoint={endpoint} channelId={channelId} />)}
    </div>
  )
}
