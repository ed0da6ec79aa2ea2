/** Secret-like input detection: each pattern type found, ordinary prose left alone, values never returned. */
import { describe, expect, it } from "vitest"
import { detectSecrets, maskArguments, maxScannedLength, redactSecrets } from "../../src/secrets/Patterns.ts"

// Built at runtime so no credential-shaped literal sits in the repository for scanners to flag.
const rand = (length: number, alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789") => {
  let out = ""
  let seed = 42
  for (let i = 0; i < length; i++) {
    seed = (seed * 1103515245 + 12345) % 2147483648
    out += alphabet[seed % alphabet.length]
  }
  // Generated keys mix letters and digits; make sure this one does too.
  return out.slice(0, -2) + "7Q"
}
const upper = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
const b64url = (length: number) => rand(length, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
const jwtPart = (json: object) => Buffer.from(JSON.stringify(json)).toString("base64url")
const jwt = `${jwtPart({ alg: "HS256", typ: "JWT" })}.${jwtPart({ sub: "user-1", kind: "widget", exp: 1900000000 })}.${b64url(43)}`

describe("detectSecrets finds", () => {
  const cases: ReadonlyArray<readonly [string, string, ReadonlyArray<string>]> = [
    ["an OpenAI key", `here is my key ${"sk-"}${rand(48)} please use it`, ["openai_api_key"]],
    ["an OpenAI project key", `OPENAI_API_KEY=${"sk-proj-"}${b64url(120)}`, ["openai_api_key"]],
    ["an Anthropic key", `${"sk-ant-api03-"}${b64url(93)}AA`, ["anthropic_api_key"]],
    ["an AWS access key id", `aws id ${"AKIA"}${rand(16, upper)}`, ["aws_access_key_id"]],
    [
      "an AWS secret access key",
      `aws_secret_access_key = ${rand(40, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789/+")}`,
      ["aws_secret_access_key"]
    ],
    ["a GitHub personal token", `token ${"ghp_"}${rand(36)}`, ["github_token"]],
    ["a GitHub fine-grained token", `${"github_pat_"}${rand(22)}_${rand(59)}`, ["github_token"]],
    ["a GitLab token", `${"glpat-"}${rand(20)}`, ["gitlab_token"]],
    ["a Slack bot token", `SLACK_BOT_TOKEN=${"xoxb-"}${rand(12, "0123456789")}-${rand(13, "0123456789")}-${rand(24)}`, ["slack_token"]],
    ["a Slack webhook URL", `https://hooks.slack.com/services/T${rand(8, upper)}/B${rand(8, upper)}/${rand(24)}`, ["slack_webhook_url"]],
    ["a Stripe secret key", `${"sk_live_"}${rand(24)}`, ["stripe_secret_key"]],
    ["a Google API key", `key=${"AIza"}${b64url(35)}`, ["google_api_key"]],
    ["a Cairn scoped key", `use ${"ask_"}${b64url(43)} for the bridge`, ["cairn_scoped_key"]],
    ["a private key block", "-----BEGIN RSA PRIVATE KEY-----\nMIIEow...\n-----END RSA PRIVATE KEY-----", ["private_key"]],
    ["an OpenSSH private key", "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk...", ["private_key"]],
    ["a PKCS#8 private key", "-----BEGIN PRIVATE KEY-----\nMIIEvQ...", ["private_key"]],
    ["a PGP private key", "-----BEGIN PGP PRIVATE KEY BLOCK-----\nlQOYBF...", ["private_key"]],
    ["a JWT", `the token is ${jwt}`, ["jwt"]],
    ["a JWT as a bearer token, reported once as jwt", `Authorization: Bearer ${jwt}`, ["jwt"]],
    ["an opaque bearer token", `curl -H "Authorization: Bearer ${rand(40)}"`, ["bearer_token"]],
    ["a password assignment", "DB_PASSWORD=hunter2", ["password_assignment"]],
    ["a password in a URL-less config line", "password = correcthorsebattery", ["password_assignment"]],
    ["a quoted JSON password", `{"username": "admin", "password": "tr0ub4dor"}`, ["password_assignment"]],
    ["a YAML password", "db:\n  user: app\n  password: 'letmein'", ["password_assignment"]],
    ["a password with symbols after a colon", "Password: S3cure!pass", ["password_assignment"]],
    ["a password told in a sentence", "my email password is Summer2024! can you log in", ["password_assignment"]],
    ["a database URL with a password", "DATABASE_URL=postgres://app:S3cret-pw@db.internal:5432/app", ["url_credentials"]],
    ["credentials in an http URL", "fetch https://admin:hunter22@intranet.example.com/status", ["url_credentials"]],
    ["a generic API key", `WEATHER_API_KEY=${rand(32)}`, ["generic_api_key"]],
    ["a JSON client secret", `{"client_secret": "${rand(40)}"}`, ["generic_api_key"]],
    ["an access token assignment", `access_token: ${b64url(30)}`, ["generic_api_key"]]
  ]
  for (const [name, text, expected] of cases) {
    it(name, () => {
      expect(detectSecrets(text)).toEqual(expected)
    })
  }

  it("several types in one message, each once, vendor-specific first", () => {
    const text = [
      `OPENAI_API_KEY=${"sk-"}${rand(48)}`,
      `another: ${"sk-"}${rand(40)}`,
      "password=hunter2",
      `GITHUB_TOKEN=${"ghp_"}${rand(36)}`,
      `x_api_key=${rand(32)}`
    ].join("\n")
    expect(detectSecrets(text)).toEqual(["openai_api_key", "github_token", "password_assignment", "generic_api_key"])
  })

  it("a vendor key assigned to an api_key variable is reported as the vendor's only", () => {
    expect(detectSecrets(`api_key = "${"sk-"}${rand(48)}"`)).toEqual(["openai_api_key"])
  })

  it("never returns the secret value", () => {
    const secret = `${"ghp_"}${rand(36)}`
    const found = detectSecrets(`token ${secret} and password=hunter2`)
    expect(JSON.stringify(found)).not.toContain(secret)
    expect(JSON.stringify(found)).not.toContain("hunter2")
  })
})

describe("detectSecrets leaves ordinary text alone", () => {
  const prose: ReadonlyArray<readonly [string, string]> = [
    ["talk about passwords", "I forgot my password, how do I reset it? The password reset link expired."],
    ["a form label", "Password: required. Please choose a strong password with at least 12 characters."],
    ["a label in brackets", "Password: (required)"],
    ["a sentence with 'the password is'", "The password is incorrect, try again."],
    ["talk about API keys", "Where do I find my API key? The api key page in settings lists it."],
    ["placeholders", "Set OPENAI_API_KEY=your_api_key_here and password=<password> or password=******** then api_key: \"${API_KEY}\""],
    ["env references", "password=$DB_PASSWORD and api_key=${WEATHER_API_KEY}"],
    ["code using a password variable", "const hash = await scrypt(password, salt, 64)\nif (!user.password) return"],
    ["a key id field", "api_key_id: 4f1e2c and password_hash: stored"],
    ["hyphenated words after sk-", "sk-learning-is-a-long-hyphenated-word-chain-without-digits"],
    ["a short sk- word", "the sk-1 model and the gpt-4o-mini model"],
    ["a PEM public key", "-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkq...\n-----END PUBLIC KEY-----"],
    ["a certificate", "-----BEGIN CERTIFICATE-----\nMIIDdzCCAl+gAwIBAgIE...\n-----END CERTIFICATE-----"],
    ["the word bearer", "The bearer of this letter is my friend. Bearer tokens are sent in a header."],
    ["a UUID and a git hash", "session 3f2b8c1e-9a4d-4e6f-8b2a-1c3d5e7f9a0b at commit a1edc30f4b2c9d8e7f6a5b4c3d2e1f0a9b8c7d6e"],
    ["a question about AWS", "What does AKIA mean at the start of an AWS access key id?"],
    ["a URL with a path", "See https://example.com/docs/api-keys/how-to-rotate-your-access-token for details"],
    ["an email and a phone", "Write to anna.berg@example.com or call +46 70 123 45 67 about the pass: it's free"],
    ["code identifiers with ask_", "call ask_user_for_confirmation() before ask_question"],
    ["markdown prose", "## Secrets\n\nNever commit secrets. Use a secret manager; rotate the secret key yearly."],
    ["URLs without a password", "postgres://postgres@127.0.0.1:5432/postgres and http://localhost:8000/chat and mailto:anna@example.com"],
    ["a URL with a placeholder password", "postgres://user:<password>@host/db or postgres://user:${PGPASSWORD}@host/db"],
    ["a digest", "sha256: 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"],
    ["code reading keys from the environment", "const apiKey = process.env.OPENAI_API_KEY\napi_key = os.environ['WEATHER_API_KEY']"],
    ["empty input", ""]
  ]
  for (const [name, text] of prose) {
    it(name, () => {
      expect(detectSecrets(text)).toEqual([])
    })
  }
})

describe("detectSecrets bounds", () => {
  // How fast a scan is belongs to a benchmark; what is asserted here is what bounds its work: only
  // the first `maxScannedLength` characters are read, and the patterns finish on inputs where a
  // backtracking one would not (it would run past the test's timeout).
  it("scans a large input only up to the bound", () => {
    const filler = "lorem ipsum dolor sit amet password reset api key ".repeat(Math.ceil(maxScannedLength / 50))
    expect(detectSecrets(filler + `password=hunter2`)).toEqual([])
    expect(detectSecrets(`password=hunter2 ` + filler)).toEqual(["password_assignment"])
  })

  it("does not backtrack catastrophically on long runs of token characters", () => {
    const run = "a".repeat(100_000)
    expect(Array.isArray(detectSecrets(`Bearer ${run} api_key=${run} sk-${run} eyJ${run}.eyJ${run}`))).toBe(true)
  })
})

describe("redactSecrets and maskArguments", () => {
  it("replaces each secret-like value and keeps the prose around it", () => {
    const key = "sk-proj-" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    expect(redactSecrets(`use ${key} for the call`)).toBe("use **** for the call")
    expect(redactSecrets("postgres://app:hunter2x@db:5432/x")).toBe("postgres://app:****@db:5432/x")
    expect(redactSecrets("nothing secret here")).toBe("nothing secret here")
  })

  it("masks values under credential-like names whole, and redacts secrets found elsewhere", () => {
    const token = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    expect(
      maskArguments({
        url: "https://example.com",
        api_key: "short",
        headers: { Authorization: "Bearer whatever", Accept: "text/plain" },
        note: `token is ${token}`,
        password: 1234,
        list: ["plain", token],
        nested: { credentials: { user: "ann", pass: "pw" } },
        secrets: { X: "hunter2" },
        long: `${"a".repeat(3000)} ${token}`
      })
    ).toEqual({
      url: "https://example.com",
      api_key: "****",
      headers: { Authorization: "****", Accept: "text/plain" },
      note: "token is ****",
      password: "****",
      list: ["plain", "****"],
      nested: { credentials: { user: "****", pass: "****" } },
      secrets: { X: "****" },
      long: `${"a".repeat(2000)}… [${3001 + token.length} characters]`
    })
  })
})
