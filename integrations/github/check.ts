/** Test connection (the settings form's button): ask the API who the token belongs to, with the settings as given. */
import type { IntegrationContext } from "../../src/sdk/index.ts"
import { readConfig } from "./config.ts"

export const checkConnection = async (cairn: IntegrationContext, settings: Readonly<Record<string, string | undefined>>) => {
  const config = readConfig(settings)
  if (!config.token) throw new Error("Set GITHUB_TOKEN first")
  const response = await cairn.http.request(`${config.apiUrl}/user`, {
    method: "GET",
    headers: {
      authorization: `Bearer ${config.token}`,
      accept: "application/vnd.github+json",
      "user-agent": "cairn-github-integration"
    },
    timeoutMs: 20_000
  })
  if (response.status === 401) throw new Error(`${config.apiUrl} refused the token (401): it is wrong, expired or revoked`)
  if (!response.ok) throw new Error(`${config.apiUrl}/user answered ${response.status}: ${response.text.slice(0, 200)}`)
  const login = String(response.json<{ login?: unknown }>().login ?? "?")
  const mismatch = config.botLogin && config.botLogin.toLowerCase() !== login.toLowerCase()
    ? `; GITHUB_BOT_LOGIN says @${config.botLogin}, so mentions of @${login} will not call the bot`
    : ""
  return `The token belongs to @${login}${mismatch}`
}
