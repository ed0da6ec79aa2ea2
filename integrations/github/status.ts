/** What a person sees of the integration: its status, and the diagnosis (each check with what to do on failure). */
import type { IntegrationContext } from "../../src/sdk/index.ts"
import { githubApi } from "./api.ts"
import { readConfig } from "./config.ts"
import { CLIENT_ID_PREFIX } from "./hooks.ts"
import { registered } from "./state.ts"

const repositories = async (cairn: IntegrationContext) =>
  (await cairn.channels.bound()).map(({ channel, binding }) => ({
    repository: binding.client_id.slice(CLIENT_ID_PREFIX.length),
    channel_id: channel.id,
    channel: channel.name,
    bot_id: channel.bot_id
  }))

export const status = async (cairn: IntegrationContext) => {
  const config = readConfig(await cairn.settings.all())
  return {
    status: "ok",
    api_url: config.apiUrl,
    bot_login: config.botLogin ?? null,
    webhook_secret_set: config.webhookSecret !== undefined,
    token_set: config.token !== undefined,
    review_on_synchronize: config.reviewOnSynchronize,
    every_comment_repos: config.everyCommentRepos,
    repositories: await repositories(cairn),
    last_delivery: (await cairn.store.get("last-delivery")) ?? null
  }
}

type Check = "pass" | "fail"

/** The token's account, checked against GITHUB_BOT_LOGIN; undefined when it answers as expected. */
const tokenProblem = async (cairn: IntegrationContext, botLogin: string | undefined) => {
  try {
    const user = await (await githubApi(cairn)).get<{ login?: string }>("/user")
    if (botLogin && user.login && user.login.toLowerCase() !== botLogin.toLowerCase()) {
      return `GITHUB_TOKEN belongs to ${user.login}, not GITHUB_BOT_LOGIN ${botLogin}: the bot would answer its own comments`
    }
    return undefined
  } catch (error) {
    return `GITHUB_TOKEN was refused or the API did not answer: ${error instanceof Error ? error.message : String(error)}`
  }
}

export const diagnose = async (cairn: IntegrationContext) => {
  const config = readConfig(await cairn.settings.all())
  const issues: Array<string> = []
  const meta: Check = registered.metadata ? "pass" : "fail"
  if (meta === "fail") {
    issues.push("The github metadata (client id prefix github:) is not registered: hooks.ts did not load; see the server log")
  }
  const dispatcher: Check = registered.dispatcher ? "pass" : "fail"
  if (dispatcher === "fail") {
    issues.push("The github dispatcher is not registered: answers cannot be posted; check dispatcher.ts in the server log")
  }
  let credentials: Check = "pass"
  if (!config.webhookSecret) {
    issues.push("Set GITHUB_WEBHOOK_SECRET and give GitHub's webhook the same secret: without it every delivery is refused")
  }
  if (!config.botLogin) {
    issues.push("Set GITHUB_BOT_LOGIN, the account of the token: mentions and the bot's own comments are recognised by it")
  }
  if (!config.token) issues.push("Set GITHUB_TOKEN (pull requests read, issues write)")
  else {
    const problem = await tokenProblem(cairn, config.botLogin)
    if (problem) issues.push(problem)
  }
  if (issues.length > Number(meta === "fail") + Number(dispatcher === "fail")) credentials = "fail"
  const bindings: Check = (await cairn.channels.bound()).length > 0 ? "pass" : "fail"
  if (bindings === "fail") {
    issues.push("No repository is bound: bind a channel with integration_type github and client_id github:<owner>/<repo>")
  }
  const checks = { meta, dispatcher, credentials, bindings }
  const ready = Object.values(checks).every((c) => c === "pass")
  return { status: ready ? "ok" : "failing", ready, checks, issues }
}
