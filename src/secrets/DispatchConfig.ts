/**
 * Secrets inside a dispatch_config (a Slack token, a webhook secret, a webhook URL) at rest and in
 * responses: values under secret-looking keys, and every URL value as a whole past its host (a
 * Slack incoming webhook's secret is its path; `SealedUrl.ts`), are sealed with AES-256-GCM (a key
 * derived from the server secret for this purpose) before they are stored, opened only to deliver,
 * and shown masked: a URL as `scheme://host/****`.
 */
import { Effect } from "effect"
import { isMaskOf, MASK } from "./Mask.ts"
import { maskWholeUrl, openWholeUrl, sealWholeUrl } from "./SealedUrl.ts"
import { looksLikeUrl, sealedPrefix } from "./UrlSecrets.ts"
import { makeKeyVaultFor } from "./Vault.ts"

const secretKey = /token|secret|password|passwd|api[_-]?key|authorization|credential/i

/** `value` with each secret value replaced by `whole(value)` and each URL by `url(value)`. */
const mapSecrets = (value: unknown, whole: (secret: string) => string, url: (value: string) => string): unknown => {
  if (Array.isArray(value)) return value.map((item) => mapSecrets(item, whole, url))
  if (typeof value === "string") return looksLikeUrl(value) ? url(value) : value
  if (value && typeof value === "object") {
    return Object.fromEntries(
      Object.entries(value).map(([key, inner]) => [
        key,
        secretKey.test(key) && typeof inner === "string" ? whole(inner) : mapSecrets(inner, whole, url)
      ])
    )
  }
  return value
}

export interface DispatchSecretsShape {
  readonly seal: (config: Record<string, unknown>) => Record<string, unknown>
  readonly open: (config: Record<string, unknown>) => Record<string, unknown>
}

export const makeDispatchSecrets = Effect.map(makeKeyVaultFor("dispatch-config-secrets"), (vault): DispatchSecretsShape => {
  // The vault's format behind a prefix of our own, so a sealed value is never sealed twice.
  const encrypt = (plain: string) => (plain.startsWith(sealedPrefix) ? plain : sealedPrefix + vault.encrypt(plain))
  // A value that no longer opens (the server secret changed) is gone, and the delivery will say so.
  const decrypt = (stored: string) => (stored.startsWith(sealedPrefix) ? (vault.decrypt(stored.slice(sealedPrefix.length)) ?? "") : stored)
  return {
    seal: (config) => mapSecrets(config, encrypt, (url) => sealWholeUrl(url, vault)) as Record<string, unknown>,
    open: (config) => mapSecrets(config, decrypt, (url) => openWholeUrl(url, vault)) as Record<string, unknown>
  }
})

/** What a response shows of a dispatch_config: each secret value as the mask alone, each URL as its scheme and host. */
export const maskDispatchConfig = (config: Record<string, unknown>): Record<string, unknown> =>
  mapSecrets(config, () => MASK, maskWholeUrl) as Record<string, unknown>

/**
 * A dispatch_config sent back as a response showed it, against the stored one opened: a top-level
 * secret sent as its mask keeps the stored value, and so does a URL sent as the stored one's
 * `scheme://host/****` (a mask of another host has nothing to keep: it is taken as written).
 */
export const unmaskDispatchConfig = (sent: Record<string, unknown>, opened: Record<string, unknown>): Record<string, unknown> =>
  Object.fromEntries(
    Object.entries(sent).map(([key, value]) => {
      const stored = opened[key]
      if (typeof value !== "string" || typeof stored !== "string") return [key, value]
      if (value === MASK || isMaskOf(value, stored)) return [key, stored]
      return [key, looksLikeUrl(value) && looksLikeUrl(stored) && value === maskWholeUrl(stored) ? stored : value]
    })
  )
