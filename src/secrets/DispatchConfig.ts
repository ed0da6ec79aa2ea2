/**
 * Secrets inside a dispatch_config (a Slack token, a webhook secret) at rest and in responses:
 * values under secret-looking keys are sealed with AES-256-GCM (a key derived from the server
 * secret for this purpose) before they are stored, opened only to deliver, and shown masked.
 */
import { Effect } from "effect"
import { MASK } from "./Mask.ts"
import { makeKeyVaultFor } from "./Vault.ts"

const secretKey = /token|secret|password|passwd|api[_-]?key|authorization|credential/i
const sealedPrefix = "sealed:"

const mapSecrets = (value: unknown, f: (secret: string) => string): unknown => {
  if (Array.isArray(value)) return value.map((item) => mapSecrets(item, f))
  if (value && typeof value === "object") {
    return Object.fromEntries(
      Object.entries(value).map(([key, inner]) => [
        key,
        secretKey.test(key) && typeof inner === "string" ? f(inner) : mapSecrets(inner, f)
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
    seal: (config) => mapSecrets(config, encrypt) as Record<string, unknown>,
    open: (config) => mapSecrets(config, decrypt) as Record<string, unknown>
  }
})

/** What a response shows of a dispatch_config: each secret value as the mask alone. */
export const maskDispatchConfig = (config: Record<string, unknown>): Record<string, unknown> =>
  mapSecrets(config, () => MASK) as Record<string, unknown>
