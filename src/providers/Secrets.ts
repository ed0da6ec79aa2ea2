/** What of a provider's settings is a credential: never in an answer or a log line. */
import { urlSecretValues } from "../secrets/UrlSecrets.ts"
import type { FamilyTarget } from "./Family.ts"

/** Header names whose values are credentials: masked in answers like the API key. */
export const sensitiveHeader = (name: string) => /auth|key|token|secret|password|cookie/i.test(name)

/**
 * Everything of a provider's that must never reach an answer or a log line: its key, the values of
 * its credential headers, and the credentials in its base URL (a query's `api-key=`; a password is
 * possible only for the default provider, from OPENAI_BASE_URL).
 */
export const secretsOf = (provider: FamilyTarget["provider"]): ReadonlyArray<string | undefined> => {
  const secrets: Array<string | undefined> = [provider.apiKey]
  for (const [name, value] of Object.entries(provider.extraHeaders)) if (sensitiveHeader(name)) secrets.push(value)
  return [...secrets, ...urlSecretValues(provider.baseUrl)]
}
