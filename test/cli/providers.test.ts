/**
 * `cairn providers` against a real Cairn: the preset table; `add` from a preset with the key read
 * from an environment variable (`--api-key-env`), and refused without a key when the preset needs
 * one; `list` with the key masked (the key itself in no output); `models` read from the provider
 * with the stored key (and the reason when the provider cannot be reached); `remove`.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startWithFakeLlm, stopWithFakeLlm } from "../compat/harness.ts"
import { type FakeLlm, startFakeLlm } from "../fixtures/fakeLlm.ts"
import { tempDir } from "../support/database.ts"
import { runCli, type TestServer } from "../support/server.ts"

const secret = "sk-cloud-secret-0123456789abcdef"

describe("cairn providers", () => {
  let server: TestServer
  let llm: FakeLlm
  /** The provider added: a fake OpenAI that refuses requests without the secret. */
  let cloud: FakeLlm
  let home: string
  const cairn = (args: ReadonlyArray<string>, env: Record<string, string> = {}) =>
    runCli([...args, "--url", server.baseUrl, "--key", server.apiKey], { XDG_CONFIG_HOME: home, ...env })
  const json = async (...args: Array<string>) => {
    const result = await cairn([...args, "--json"])
    expect(result.code, result.output).toBe(0)
    return JSON.parse(result.stdout)
  }
  const ids = async () => (await json("providers", "list")).map((provider: { id: string }) => provider.id)

  beforeAll(async () => {
    ;({ llm, server } = await startWithFakeLlm("pglite", "Done."))
    cloud = await startFakeLlm({ apiKey: secret, models: ["alpha-1", "alpha-2"] })
    home = tempDir("cairn-cli-home-")
  })
  afterAll(async () => {
    await stopWithFakeLlm({ server, llm })
    await cloud?.close()
  })

  it("prints the presets: type, whether a key is needed, base URL", async () => {
    const table = await runCli(["providers", "presets"], { XDG_CONFIG_HOME: home })
    expect(table.code, table.output).toBe(0)
    expect(table.stdout.split("\n")[0]).toMatch(/^PRESET\s+TYPE\s+KEY\s+BASE URL$/)
    expect(table.stdout).toMatch(/^ollama\s+openai\s+optional\s+http:\/\/localhost:11434\/v1$/m)
    expect(table.stdout).toMatch(/^anthropic\s+anthropic\s+required\s+https:\/\/api\.anthropic\.com$/m)
    const presets = JSON.parse((await runCli(["providers", "presets", "--json"], { XDG_CONFIG_HOME: home })).stdout)
    expect(presets.map((preset: { id: string }) => preset.id)).toEqual(expect.arrayContaining(["openai", "gemini", "ollama", "together"]))
    expect(presets.find((preset: { id: string }) => preset.id === "groq")).toMatchObject({ key: "required", type: "openai" })
  })

  it("refuses a preset that needs a key when none is given, and a key variable that is not set", async () => {
    const keyless = await cairn(["providers", "add", "cloud", "--preset", "openai", "--base-url", cloud.url])
    expect(keyless.code).toBe(1)
    expect(keyless.stderr).toMatch(/^cairn: the openai preset needs an API key .*--api-key-env VAR/m)
    const unset = await cairn(["providers", "add", "cloud", "--preset", "openai", "--api-key-env", "CAIRN_TEST_UNSET_KEY"])
    expect(unset.code).toBe(1)
    expect(unset.stderr).toContain("the environment variable CAIRN_TEST_UNSET_KEY (--api-key-env) is not set")
    const unknown = await cairn(["providers", "add", "cloud", "--preset", "skynet"])
    expect(unknown.code).toBe(1)
    expect(unknown.stderr).toContain("no preset skynet (there are: openai, anthropic, gemini")
    expect(await ids()).not.toContain("cloud")
  })

  it("adds from a preset with the key from the environment, lists it masked, and reads its models with that key", async () => {
    const added = await cairn(["providers", "add", "cloud", "--preset", "openai", "--base-url", cloud.url, "--api-key-env", "CLOUD_KEY"], {
      CLOUD_KEY: secret
    })
    expect(added.code, added.output).toBe(0)
    expect(added.stdout).toContain(`Added the provider cloud (openai, ${cloud.url}), key ****`)
    expect(added.output).not.toContain(secret)

    const local = await cairn(["providers", "add", "local", "--preset", "ollama", "--base-url", "http://127.0.0.1:9/v1"])
    expect(local.code, local.output).toBe(0)
    const custom = await cairn(["providers", "add", "gem", "--base-url", "http://127.0.0.1:9", "--type", "gemini", "--api-key", "g-key-1"])
    expect(custom.code, custom.output).toBe(0)

    const list = await cairn(["providers", "list"])
    expect(list.code, list.output).toBe(0)
    expect(list.stdout.split("\n")[0]).toMatch(/^ID\s+TYPE\s+BASE URL\s+KEY\s+SOURCE$/)
    expect(list.stdout).toMatch(/^cloud\s+openai\s+\S+\s+\*{4}cdef\s+stored$/m)
    expect(list.stdout).toMatch(/^local\s+openai\s+http:\/\/127\.0\.0\.1:9\/v1\s+none\s+stored$/m)
    expect(list.stdout).toMatch(/^gem\s+gemini\s+/m)
    expect(list.stdout).toMatch(/^default\s+openai\s+.*environment \(default\)$/m)
    const listed = await json("providers", "list")
    expect(listed.find((provider: { id: string }) => provider.id === "cloud")).toMatchObject({ type: "openai", base_url: cloud.url })
    for (const output of [list.output, JSON.stringify(listed)]) expect(output).not.toContain(secret)

    const models = await cairn(["providers", "models", "cloud"])
    expect(models.code, models.output).toBe(0)
    expect(models.stdout).toMatch(/^cloud\/alpha-1\s+-\s+-\s+upstream$/m)
    expect(models.stdout).toMatch(/^cloud\/alpha-2\s+/m)
    expect(cloud.requestsTo("/v1/models").at(-1)?.headers["authorization"]).toBe(`Bearer ${secret}`)
    expect((await json("providers", "models", "cloud")).upstream_error).toBeNull()
  })

  it("says why a provider's own list could not be read", async () => {
    const models = await cairn(["providers", "models", "local"])
    expect(models.code, models.output).toBe(0)
    expect(models.stdout).toContain("The provider's own list could not be read:")
    expect((await json("providers", "models", "local")).upstream_error).toEqual(expect.any(String))
  })

  it("removes a provider, and refuses one that is not there and the default one", async () => {
    const removed = await cairn(["providers", "remove", "cloud"])
    expect(removed.code, removed.output).toBe(0)
    expect(removed.stdout).toContain("Removed the provider cloud")
    expect(await ids()).not.toContain("cloud")
    expect(await json("providers", "remove", "gem")).toEqual({ id: "gem", removed: true })
    const again = await cairn(["providers", "remove", "cloud"])
    expect(again.code).toBe(1)
    expect(again.stderr).toMatch(/^cairn: .*NotFound|^cairn: .*not found/im)
    const fixed = await cairn(["providers", "remove", "default"])
    expect(fixed.code).toBe(1)
    expect(await ids()).toEqual(expect.arrayContaining(["default", "local"]))
  })
})
