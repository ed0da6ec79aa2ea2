/** The integration's settings as its code uses them. */
import { readSettings } from "../../src/sdk/index.ts"
import { behaviourSettings } from "./setup.ts"

export interface GithubConfig {
  readonly webhookSecret: string | undefined
  readonly token: string | undefined
  readonly botLogin: string | undefined
  readonly apiUrl: string
  readonly reviewOnSynchronize: boolean
  readonly everyCommentRepos: ReadonlyArray<string>
  readonly maxPatchChars: number
}

const textOf = (value: string | undefined) => (value && value.trim() ? value.trim() : undefined)

/** The connection settings stay undefined while missing (diagnose names them); the others are typed. */
export const readConfig = (settings: Readonly<Record<string, string | undefined>>): GithubConfig => {
  const read = readSettings({ env_vars: behaviourSettings }, settings)
  // Only the environment can hold a wrong one: a saved value was checked when it was saved.
  if (!read.ok) throw new Error(`GitHub settings: ${read.error}`)
  const values = read.values
  return {
    webhookSecret: textOf(settings.GITHUB_WEBHOOK_SECRET),
    token: textOf(settings.GITHUB_TOKEN),
    botLogin: textOf(settings.GITHUB_BOT_LOGIN)?.replace(/^@/, ""),
    apiUrl: values.GITHUB_API_URL.replace(/\/+$/, ""),
    reviewOnSynchronize: values.GITHUB_REVIEW_ON_SYNCHRONIZE,
    everyCommentRepos: values.GITHUB_EVERY_COMMENT_REPOS ?? [],
    maxPatchChars: values.GITHUB_MAX_PATCH_CHARS
  }
}
