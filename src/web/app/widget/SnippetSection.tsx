/**
 * The copy-paste embed snippet for a bot: the one `<script>` line with the choices made here
 * (the host's token route, greeting, theme, accent colour, placement), and the minting route the
 * host's backend needs beside it.
 */
import { useState } from "react"
import { normalAccent } from "../../widget/colors.ts"
import { CopyValue } from "../ui/Copy.tsx"
import { Select, TextField } from "../ui/Field.tsx"
import { Section } from "../ui/Page.tsx"
import { embedSnippet, type SnippetChoices } from "./snippet.ts"

const backendRoute = (cairnOrigin: string, bot: string) =>
  `app.post("/cairn-token", async (req, res) => {
  // Check your own session here: only your visitors get tokens.
  const r = await fetch("${cairnOrigin}/api/v1/widget-auth/mint", {
    method: "POST",
    headers: { authorization: \`Bearer \${process.env.CAIRN_KEY}\`, "content-type": "application/json" },
    body: JSON.stringify({ source_bot_id: ${JSON.stringify(bot)} })
  })
  const { token, expires_at } = await r.json()
  res.status(r.status).json({ token, expires_at })
})`

export const SnippetSection = ({ bot }: { readonly bot: string }) => {
  const [choices, setChoices] = useState<Omit<SnippetChoices, "bot">>({
    tokenUrl: "/cairn-token",
    greeting: "",
    theme: "light",
    accent: "",
    mode: "launcher"
  })
  const [accentTyped, setAccentTyped] = useState("")
  const accentError = accentTyped.trim() && normalAccent(accentTyped) === null ? "Enter a colour as #rgb or #rrggbb" : undefined
  const origin = window.location.origin
  const snippet = embedSnippet(origin, { ...choices, bot })
  return (
    <Section title="Embed snippet">
      <p className="muted">
        Paste this line into the site's pages. The token route is one of the site's own backend routes that mints widget tokens with the
        site's key (below).
      </p>
      <div className="grid-2">
        <TextField
          label="Token route"
          value={choices.tokenUrl}
          onChange={(tokenUrl) => setChoices({ ...choices, tokenUrl })}
          description="A path on the site, answered by its backend."
        />
        <TextField
          label="Greeting"
          value={choices.greeting}
          onChange={(greeting) => setChoices({ ...choices, greeting })}
          placeholder="Hi! Ask me anything."
          description="Shown beside the launcher and first in the chat."
        />
        <Select
          label="Theme"
          value={choices.theme}
          onChange={(theme) => setChoices({ ...choices, theme: theme === "dark" ? "dark" : "light" })}
          options={[{ value: "light", label: "Light" }, { value: "dark", label: "Dark" }]}
          description="The site's own, whatever the visitor's system uses."
        />
        <TextField
          label="Accent colour"
          value={accentTyped}
          placeholder="#2f6fde"
          error={accentError}
          onChange={(typed) => {
            setAccentTyped(typed)
            setChoices({ ...choices, accent: normalAccent(typed) ?? "" })
          }}
        />
        <Select
          label="Placement"
          value={choices.mode}
          onChange={(mode) => setChoices({ ...choices, mode: mode === "inline" ? "inline" : "launcher" })}
          options={[{ value: "launcher", label: "Launcher button in the corner" }, {
            value: "inline",
            label: "Inline, where the line stands"
          }]}
        />
      </div>
      <CopyValue value={snippet} label="Embed snippet" />
      <details>
        <summary>The site's token route (Node.js, Express)</summary>
        <pre className="plain mono" data-testid="backend-route">{backendRoute(origin, bot)}</pre>
      </details>
    </Section>
  )
}
