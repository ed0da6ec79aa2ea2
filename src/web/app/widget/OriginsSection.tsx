/**
 * The sites allowed to embed a bot's widget, edited at runtime: each change is saved at once and
 * takes effect on the site's next page load (no restart). WIDGET_EMBED_ORIGINS, the server's
 * setting for every bot, is shown beside them and edited where it is set.
 */
import { useState } from "react"
import { isEmbedOrigin, type WidgetSettings } from "../../../access/widget/Model.ts"
import type { PageProps } from "../pages.ts"
import { TextField } from "../ui/Field.tsx"
import { Section } from "../ui/Page.tsx"
import { useAction } from "../ui/useLoad.ts"

/** What a site owner types (`https://Shop.example.com/some/page`) as the origin the browser reports. */
const originOf = (typed: string): string | null => {
  try {
    const origin = new URL(typed.trim()).origin
    return isEmbedOrigin(origin) ? origin : null
  } catch {
    return null
  }
}

export const OriginsSection = (
  { auth, settings, canWrite, onSaved }: Pick<PageProps, "auth"> & {
    readonly settings: WidgetSettings
    readonly canWrite: boolean
    readonly onSaved: (next: WidgetSettings) => void
  }
) => {
  const [typed, setTyped] = useState("")
  const [fieldError, setFieldError] = useState<string | undefined>()
  const action = useAction()
  const save = async (origins: ReadonlyArray<string>) => {
    const saved = await action.run(() =>
      auth.call((client) => client.widget.setOrigins({ path: { bot_id: settings.bot_id }, payload: { allowed_origins: origins } }))
    )
    if (saved) onSaved(saved)
    return saved
  }
  const add = async () => {
    const origin = originOf(typed)
    if (origin === null) {
      setFieldError("Enter a site's address with its scheme, like https://shop.example.com")
      return
    }
    setFieldError(undefined)
    if (await save([...settings.allowed_origins, origin])) setTyped("")
  }
  return (
    <Section title="Allowed sites">
      <p className="muted">
        Pages on these sites may show this bot's widget. A change applies on the site's next page load; other sites see a notice instead of
        the chat.
      </p>
      {settings.allowed_origins.length === 0 ?
        <p className="muted" data-testid="no-origins">No site is allowed for this bot yet.</p> :
        (
          <ul className="list" aria-label="Allowed sites">
            {settings.allowed_origins.map((origin) => (
              <li key={origin}>
                <code className="item">{origin}</code>
                {canWrite ?
                  (
                    <button
                      type="button"
                      className="small"
                      aria-label={`Remove ${origin}`}
                      disabled={action.busy}
                      onClick={() => void save(settings.allowed_origins.filter((other) => other !== origin))}
                    >
                      Remove
                    </button>
                  ) :
                  null}
              </li>
            ))}
          </ul>
        )}
      {settings.default_origins.length > 0 ?
        (
          <p className="muted" data-testid="default-origins">
            Allowed for every bot by the server's WIDGET_EMBED_ORIGINS: {settings.default_origins.join(", ")}
          </p>
        ) :
        null}
      {canWrite ?
        (
          <form
            className="row"
            aria-label="Allow a site"
            onSubmit={(event) => {
              event.preventDefault()
              void add()
            }}
          >
            <div className="grow">
              <TextField label="Site" value={typed} onChange={setTyped} placeholder="https://shop.example.com" error={fieldError} />
            </div>
            <button type="submit" className="primary" disabled={action.busy || !typed.trim()}>Allow site</button>
          </form>
        ) :
        null}
      {action.error ? <p role="alert" className="error">{action.error}</p> : null}
    </Section>
  )
}
