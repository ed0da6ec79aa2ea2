/**
 * Widget: per bot, the sites allowed to embed its chat (edited at runtime, saved in the database)
 * and the copy-paste embed snippet. `/admin/widget/<bot>` opens a bot's.
 */
import { useEffect, useState } from "react"
import type { WidgetSettings } from "../../../access/widget/Model.ts"
import type { PageProps } from "../pages.ts"
import { navigate } from "../route.ts"
import { allows } from "../scopes.ts"
import { Select } from "../ui/Field.tsx"
import { AppLink } from "../ui/Link.tsx"
import { Page } from "../ui/Page.tsx"
import { useLoad } from "../ui/useLoad.ts"
import { OriginsSection } from "./OriginsSection.tsx"
import { SnippetSection } from "./SnippetSection.tsx"

export default function WidgetPage({ auth, rest }: PageProps) {
  const bots = useLoad(() => auth.call((client) => client.bots.list()), [auth])
  const list = bots.data?.bots ?? []
  const bot = rest[0] ?? list[0]?.id ?? ""
  const loaded = useLoad(
    () => (bot ? auth.call((client) => client.widget.settings({ path: { bot_id: bot } })) : Promise.resolve(undefined)),
    [auth, bot]
  )
  const [settings, setSettings] = useState<WidgetSettings | undefined>()
  useEffect(() => setSettings(loaded.data), [loaded.data])
  const canWrite = allows(auth, ["widget", "setOrigins"])
  return (
    <Page title="Widget" loading={bots.loading || loaded.loading} error={bots.error ?? loaded.error} testId="widget-page">
      <p className="muted">A bot's chat on another site: the sites allowed to show it, and the line to paste into their pages.</p>
      {list.length === 0 && !bots.loading ? <p className="empty">No bots yet.</p> : (
        <div className="grid-4">
          <Select
            label="Bot"
            value={bot}
            onChange={(id) => navigate(`/admin/widget/${encodeURIComponent(id)}`)}
            options={list.map((each) => ({ value: each.id, label: `${each.name} (${each.id})` }))}
          />
        </div>
      )}
      {settings && settings.bot_id === bot ?
        (
          <>
            {settings.has_api_key ? null : (
              <p role="note" className="error" data-testid="no-key">
                This bot has no API key, so no widget token can be minted for it: set one on{" "}
                <AppLink href={`/admin/bots/${encodeURIComponent(bot)}`}>the bot's page</AppLink> (the widget can do what that key allows).
              </p>
            )}
            <OriginsSection auth={auth} settings={settings} canWrite={canWrite} onSaved={setSettings} />
            <SnippetSection bot={bot} />
          </>
        ) :
        null}
    </Page>
  )
}
