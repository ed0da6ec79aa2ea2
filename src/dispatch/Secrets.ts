/**
 * Secrets inside a dispatch_config (a Slack token, a webhook secret) at rest and in responses:
 * values under secret-looking keys are sealed with AES-256-GCM (a key derived from the server
 * secret for this purpose) before they are stored, opened only to deliver, and shown masked.
 */
import { Effect } from "effect"
import * as crypto from "node:crypto"
import { ServerSecret } from "../config/ServerSecret.ts"

const secretKey = /token|secret|password|passwd|api[_-]?key|authorization|credential/i
const sealedPrefix = "sealed:v1:"

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

export const makeDispatchSecrets = Effect.map(ServerSecret, (secret): DispatchSecretsShape => {
  const key = secret.deriveKey("dispatch-config-secrets")
  const encrypt = (plain: string) => {
    if (plain.startsWith(sealedPrefix)) return plain
    const iv = crypto.randomBytes(12)
    const cipher = crypto.createCipheriv("aes-256-gcm", key, iv)
    const body = Buffer.concat([cipher.update(plain, "utf8"), cipher.final()])
    return sealedPrefix + Buffer.concat([iv, cipher.getAuthTag(), body]).toString("base64")
  }
  const decrypt = (stored: string) => {
    if (!stored.startsWith(sealedPrefix)) return stored
    try {
      const raw = Buffer.from(stored.slice(sealedPrefix.length), "base64")
      const decipher = crypto.createDecipheriv("aes-256-gcm", key, raw.subarray(0, 12))
      decipher.setAuthTag(raw.subarray(12, 28))
      return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString("utf8")
    } catch {
      // The server secret changed: the value is gone, and the delivery will say so.
      return ""
    }
  }
  return {
    seal: (config) => mapSecrets(config, encrypt) as Record<string, unknown>,
    open: (config) => mapSecrets(config, decrypt) as Record<string, unknown>
  }
})

/** What a response shows of a dispatch_config: secret values as "****". */
export const maskDispatchConfig = (config: Record<string, unknown>): Record<string, unknown> =>
  mapSecrets(config, () => "****") as Record<string, unknown>
