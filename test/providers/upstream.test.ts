/**
 * How `Upstream` judges a described provider failure: the wait a 429 asks for, in each form a
 * provider sends it, and the credentials taken out of every detail.
 */
import { describe, expect, it } from "vitest"
import { OpenAiClient, WireError } from "../../src/providers/OpenAiClient.ts"
import type { Provider, Target } from "../../src/providers/Providers.ts"
import { isRetryable, openAiFamily, toLlmError } from "../../src/providers/Upstream.ts"

const provider: Provider = {
  id: "azure",
  type: "openai",
  isDefault: false,
  fromEnvironment: false,
  baseUrl: "https://user:url-password-4321@llm.example.com/v1?api-version=2024-10-21",
  apiKey: "provider-key-1234",
  extraHeaders: { "api-key": "header-secret-5678" },
  models: [],
  family: openAiFamily(new OpenAiClient({ baseUrl: "https://llm.example.com/v1", apiKey: undefined, headers: {}, timeoutMs: 1_000 }))
}
const target: Target = { provider, model: "gpt-4o", id: "azure/gpt-4o" }
const judge = toLlmError(target)
const limited = (headers: Record<string, string>) => judge(new WireError({ reason: "status", status: 429, headers, message: "slow down" }))

describe("Upstream.toLlmError", () => {
  it("reads a 429's wait from retry-after-ms, Retry-After in seconds or as an HTTP date", () => {
    expect(limited({ "retry-after-ms": "1500" })).toMatchObject({ kind: "rate_limited", status: 429, retryAfterSeconds: 1.5 })
    // retry-after-ms is the more precise of the two when a provider sends both.
    expect(limited({ "retry-after-ms": "250", "retry-after": "9" }).retryAfterSeconds).toBe(0.25)
    expect(limited({ "retry-after": "3" }).retryAfterSeconds).toBe(3)
    const inTenSeconds = new Date(Date.now() + 10_000).toUTCString()
    const fromDate = limited({ "retry-after": inTenSeconds }).retryAfterSeconds!
    expect(fromDate).toBeGreaterThan(8)
    expect(fromDate).toBeLessThanOrEqual(10)
    expect(limited({ "retry-after": new Date(Date.now() - 60_000).toUTCString() }).retryAfterSeconds).toBe(0)
    expect(limited({ "retry-after": "soon" }).retryAfterSeconds).toBeUndefined()
    expect(limited({}).retryAfterSeconds).toBeUndefined()
    expect(isRetryable(limited({}))).toBe(true)
  })

  it("takes the key, a credential header and the base URL's password out of every detail", () => {
    const leaky = "key provider-key-1234, header header-secret-5678, url url-password-4321, Bearer abc.def"
    for (
      const error of [
        new WireError({ reason: "status", status: 401, message: leaky }),
        new WireError({ reason: "unreachable", message: leaky }),
        new WireError({ reason: "stream_error", message: leaky }),
        new WireError({ reason: "malformed", message: leaky })
      ]
    ) {
      const detail = judge(error).detail
      for (const secret of ["provider-key-1234", "header-secret-5678", "url-password-4321", "abc.def"]) {
        expect(detail).not.toContain(secret)
      }
    }
  })
})
