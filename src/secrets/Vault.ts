/**
 * Provider API keys at rest: AES-256-GCM under a key derived from the server secret for this one
 * purpose. Stored form: "v1:" + base64(iv | tag | ciphertext). Responses only ever carry the mask
 * (`Mask.ts`).
 */
import { Effect } from "effect"
import * as crypto from "node:crypto"
import { MASK } from "./Mask.ts"
import { ServerSecret } from "./ServerSecret.ts"

export interface KeyVaultShape {
  readonly encrypt: (plain: string) => string
  /** undefined when the value cannot be decrypted (the server secret changed). */
  readonly decrypt: (stored: string) => string | undefined
}

/** A vault for one purpose; each purpose gets its own key, derived from the server secret. */
export const makeKeyVaultFor = (purpose: string) =>
  Effect.map(ServerSecret, (secret): KeyVaultShape => {
    const key = secret.deriveKey(purpose)
    return {
      encrypt: (plain) => {
        const iv = crypto.randomBytes(12)
        const cipher = crypto.createCipheriv("aes-256-gcm", key, iv)
        const body = Buffer.concat([cipher.update(plain, "utf8"), cipher.final()])
        return `v1:${Buffer.concat([iv, cipher.getAuthTag(), body]).toString("base64")}`
      },
      decrypt: (stored) => {
        if (!stored.startsWith("v1:")) return undefined
        try {
          const raw = Buffer.from(stored.slice(3), "base64")
          const decipher = crypto.createDecipheriv("aes-256-gcm", key, raw.subarray(0, 12))
          decipher.setAuthTag(raw.subarray(12, 28))
          return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString("utf8")
        } catch {
          return undefined
        }
      }
    }
  })

export const makeKeyVault = makeKeyVaultFor("provider-keys")

/** Removes a key, and anything shaped like one, from a provider's message before it is shown. */
export const scrub = (message: string, keys: ReadonlyArray<string | undefined>): string => {
  let out = message
  for (const key of keys) if (key && key.length >= 4) out = out.split(key).join(MASK)
  // Providers echo a partly masked key ("Incorrect API key provided: sk-ab***yz"); drop it too.
  return out.replace(/\b(sk|pk|rk)-[A-Za-z0-9*_.-]{6,}/g, MASK).replace(/\bBearer\s+\S+/gi, `Bearer ${MASK}`)
}
