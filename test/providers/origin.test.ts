/** The origin rule that decides whether a stored provider key may follow a new base_url. */
import { describe, expect, it } from "vitest"
import { sameOrigin } from "../../src/secrets/UrlSecrets.ts"

describe("sameOrigin", () => {
  it("ignores the path, the host's case and an explicit default port", () => {
    expect(sameOrigin("https://api.example.com/v1", "https://api.example.com/openai/v2")).toBe(true)
    expect(sameOrigin("https://API.Example.com/v1", "https://api.example.com:443/v1")).toBe(true)
    expect(sameOrigin("http://127.0.0.1:8080/v1", "http://127.0.0.1:8080")).toBe(true)
  })

  it("tells scheme, host, subdomain and port apart", () => {
    expect(sameOrigin("https://api.example.com/v1", "http://api.example.com/v1")).toBe(false)
    expect(sameOrigin("https://api.example.com/v1", "https://api.example.com.attacker.example/v1")).toBe(false)
    expect(sameOrigin("https://api.example.com/v1", "https://evil.api.example.com/v1")).toBe(false)
    expect(sameOrigin("http://127.0.0.1:8080/v1", "http://127.0.0.1:8081/v1")).toBe(false)
    // Credentials in the URL do not change the origin, but a different host after them does.
    expect(sameOrigin("https://api.example.com/v1", "https://api.example.com@attacker.example/v1")).toBe(false)
  })

  it("treats a URL it cannot parse as another origin", () => {
    expect(sameOrigin("https://api.example.com/v1", "http://[not-a-host/v1")).toBe(false)
    expect(sameOrigin("http://[not-a-host/v1", "http://[not-a-host/v1")).toBe(false)
  })
})
