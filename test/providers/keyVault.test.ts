/** Provider key encryption, masking and scrubbing; the price arithmetic. */
import { ConfigProvider, Effect, Layer } from "effect"
import { describe, expect, it } from "vitest"
import * as AppConfig from "../../src/config/AppConfig.ts"
import { mask } from "../../src/secrets/Mask.ts"
import * as ServerSecret from "../../src/secrets/ServerSecret.ts"
import { makeKeyVault, scrub } from "../../src/secrets/Vault.ts"
import { costOf, shippedPrice } from "../../src/usage/Prices.ts"

const vaultWith = (secret: string) =>
  Effect.runSync(
    makeKeyVault.pipe(
      Effect.provide(ServerSecret.layer.pipe(Layer.provide(AppConfig.layer))),
      Effect.withConfigProvider(ConfigProvider.fromMap(new Map([["JWT_SECRET", secret]])))
    )
  )

describe("KeyVault", () => {
  const vault = vaultWith("a-server-secret-of-at-least-32-characters")

  it("encrypts with a fresh IV each time and decrypts back", () => {
    const a = vault.encrypt("sk-very-secret-key")
    const b = vault.encrypt("sk-very-secret-key")
    expect(a).toMatch(/^v1:/)
    expect(a).not.toBe(b)
    expect(a).not.toContain("very-secret")
    expect(vault.decrypt(a)).toBe("sk-very-secret-key")
  })

  it("refuses a tampered value and one made under another secret", () => {
    const stored = vault.encrypt("sk-very-secret-key")
    const raw = Buffer.from(stored.slice(3), "base64")
    raw[raw.length - 1] ^= 1
    expect(vault.decrypt(`v1:${raw.toString("base64")}`)).toBeUndefined()
    expect(vaultWith("another-server-secret-of-32-characters!").decrypt(stored)).toBeUndefined()
    expect(vault.decrypt("plain")).toBeUndefined()
  })

  it("masks keys to their last four characters only when long enough", () => {
    expect(mask("sk-0123456789abcdefWXYZ")).toBe("****WXYZ")
    expect(mask("short-key")).toBe("****")
  })

  it("scrubs the key and key-shaped strings from provider messages", () => {
    const key = "opaque-key-without-prefix-123"
    expect(scrub(`Incorrect API key provided: ${key}.`, [key])).toBe("Incorrect API key provided: ****.")
    expect(scrub("Incorrect API key provided: sk-proj-ab*********************yz12", [])).toBe("Incorrect API key provided: ****")
    expect(scrub("got header Bearer abc.def", [undefined])).toBe("got header Bearer ****")
    expect(scrub("The model `gpt-4o` does not exist", [key])).toBe("The model `gpt-4o` does not exist")
  })
})

describe("prices", () => {
  it("costs a call per million tokens, by the model's last segment, null when unknown", () => {
    expect(costOf(shippedPrice("gpt-4o"), { prompt_tokens: 1_000_000, completion_tokens: 100_000 })).toBeCloseTo(3.5, 10)
    expect(shippedPrice("openai/gpt-4o-mini")).toEqual(shippedPrice("gpt-4o-mini"))
    expect(costOf(shippedPrice("my-local-llama"), { prompt_tokens: 10, completion_tokens: 10 })).toBeNull()
    expect(costOf(shippedPrice("gpt-4o"), null)).toBeNull()
  })
})
