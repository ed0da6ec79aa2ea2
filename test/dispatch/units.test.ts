/** Pure parts of dispatch and skills: the dispatcher contract check, address checks, skill tags. */
import { describe, expect, it } from "vitest"
import { allowList, isInternalAddress, resolveTarget } from "../../src/http/Outbound.ts"
import { DispatcherContractError } from "../../src/sdk/Dispatcher.ts"
import { maskDispatchConfig } from "../../src/secrets/DispatchConfig.ts"
import { mergeSkills, skillTags } from "../../src/skills/Tags.ts"
import { checkDispatcher, optionsReceiveExtraMetadata } from "../../src/tasks/delivery/Contract.ts"
import { sessionDispatch } from "../../src/tasks/Injection.ts"
import { withSkillTags } from "../../src/tasks/Worker.ts"

describe("skill tags", () => {
  it("finds @skill tags in order, once each, without trailing punctuation", () => {
    expect(skillTags("Use @skill:concise-answers. And @skill:integrations/github/review, then @skill:concise-answers")).toEqual([
      "concise-answers",
      "integrations/github/review"
    ])
    expect(skillTags("mail me at someone@skill:x or email@skill:y")).toEqual([])
    expect(skillTags("(@skill:a) @skill:b/")).toEqual(["a", "b"])
    expect(skillTags("no tags here, @skill: alone")).toEqual([])
  })

  it("merges tags after the configured skills and removes duplicates", () => {
    expect(mergeSkills(["a", "b"], "please @skill:b and @skill:c")).toEqual(["a", "b", "c"])
    expect(mergeSkills(undefined, "@skill:c @skill:c")).toEqual(["c"])
    expect(mergeSkills(["a", "a"], "")).toEqual(["a"])
  })

  it("applies the merge to a task's execution_config and keeps its other fields", () => {
    expect(
      withSkillTags({ execution_config: { system_preamble: "p", skills: ["x"] }, prompt: "hi @skill:y @skill:x" })
    ).toEqual({ system_preamble: "p", skills: ["x", "y"] })
    expect(withSkillTags({ execution_config: { tools: ["t"] }, prompt: "plain" })).toEqual({ tools: ["t"] })
  })
})

describe("dispatcher contract", () => {
  const good = {
    deliver: async (_task: unknown, _result: string, _clientActions: unknown, _extraMetadata: unknown) => {},
    postMessage: async (_config: unknown, _text: string, { extraMetadata }: { extraMetadata?: unknown }) => extraMetadata !== 1
  }

  it("accepts a dispatcher that takes extraMetadata in both operations", () => {
    expect(checkDispatcher("custom", good)).toBe(good)
    class Klass {
      deliver(_t: unknown, _r: unknown, _c: unknown, _e: unknown) {}
      postMessage(_d: unknown, _t: unknown, options: Record<string, unknown>) {
        return options !== null
      }
    }
    expect(() => checkDispatcher("klass", new Klass())).not.toThrow()
    expect(() =>
      checkDispatcher("rest", {
        deliver: good.deliver,
        postMessage: (_d: unknown, _t: unknown, { botId, ...rest }: any) => !!botId || !!rest
      })
    ).not.toThrow()
  })

  it("rejects deliver without extraMetadata, naming the problem", () => {
    const bad = { ...good, deliver: async (_task: unknown, _result: string, _clientActions: unknown) => {} }
    expect(() => checkDispatcher("bad", bad)).toThrow(DispatcherContractError)
    expect(() => checkDispatcher("bad", bad)).toThrow(/deliver must accept \(task, result, clientActions, extraMetadata\); it declares 3/)
    // A default value hides the parameter from `length`: declared that way it does not count.
    const defaulted = { ...good, deliver: async (_t: unknown, _r: unknown, _c: unknown, _e: unknown = null) => {} }
    expect(() => checkDispatcher("defaulted", defaulted)).toThrow(/declares 3/)
  })

  it("rejects postMessage whose options pattern drops extraMetadata, or that has no options", () => {
    const dropped = { ...good, postMessage: async (_c: unknown, _t: string, { botId, username }: any) => !!(botId ?? username) }
    expect(() => checkDispatcher("dropped", dropped)).toThrow(/does not take extraMetadata/)
    const twoParams = { ...good, postMessage: async (_c: unknown, _t: string) => true }
    expect(() => checkDispatcher("two", twoParams)).toThrow(/postMessage must accept \(dispatchConfig, text, options\)/)
    expect(() => checkDispatcher("nofn", { deliver: good.deliver })).toThrow(/postMessage is not a function/)
    expect(() => checkDispatcher("", good)).toThrow(/dispatch type/)
    expect(() => checkDispatcher("x", null)).toThrow(/expected an object/)
  })

  it("reads options parameters as written", () => {
    expect(optionsReceiveExtraMetadata("options")).toBe(true)
    expect(optionsReceiveExtraMetadata("{ extraMetadata, botId }")).toBe(true)
    expect(optionsReceiveExtraMetadata("{ extraMetadata: meta = {} } = {}")).toBe(true)
    expect(optionsReceiveExtraMetadata("{ botId, ...rest }")).toBe(true)
    expect(optionsReceiveExtraMetadata("{ botId, extra }")).toBe(false)
    expect(optionsReceiveExtraMetadata("{}")).toBe(false)
  })
})

describe("webhook targets", () => {
  it("classifies internal addresses", () => {
    for (
      const address of [
        "127.0.0.1",
        "10.1.2.3",
        "172.16.0.9",
        "192.168.1.1",
        "169.254.169.254",
        "0.0.0.0",
        "100.64.0.1",
        "::1",
        "fe80::1",
        "fd00::5",
        "::ffff:127.0.0.1",
        "not-an-ip"
      ]
    ) {
      expect(isInternalAddress(address), address).toBe(true)
    }
    for (const address of ["8.8.8.8", "1.1.1.1", "2606:4700::1111", "::ffff:8.8.4.4", "172.32.0.1"]) {
      expect(isInternalAddress(address), address).toBe(false)
    }
  })

  it("refuses loopback names and addresses unless allowed, checking what the name resolves to", async () => {
    const none = allowList([])
    await expect(resolveTarget(new URL("http://127.0.0.1:9/x"), none)).rejects.toThrow(/private or loopback/)
    await expect(resolveTarget(new URL("http://localhost:9/x"), none)).rejects.toThrow(/resolves to a private or loopback address/)
    await expect(resolveTarget(new URL("http://[::1]:9/x"), none)).rejects.toThrow(/private or loopback/)
    await expect(resolveTarget(new URL("file:///etc/passwd"), none)).rejects.toThrow(/http or https/)
    const byAddress = allowList(["127.0.0.1"])
    await expect(resolveTarget(new URL("http://127.0.0.1:9/x"), byAddress)).resolves.toEqual([{ address: "127.0.0.1", family: 4 }])
    await expect(resolveTarget(new URL("http://127.0.0.2:9/x"), byAddress)).rejects.toThrow(/127\.0\.0\.2/)
    const byCidr = allowList(["127.0.0.0/8"])
    await expect(resolveTarget(new URL("http://127.0.0.2:9/x"), byCidr)).resolves.toHaveLength(1)
    const byName = allowList([" LocalHost "])
    await expect(resolveTarget(new URL("http://localhost:9/x"), byName)).resolves.not.toHaveLength(0)
  })
})

describe("dispatch config", () => {
  it("masks secret-looking values at any depth", () => {
    expect(maskDispatchConfig({ channel_id: "C1", token: "xoxb-1", nested: { api_key: "k", url: "u" }, list: [{ password: "p" }] }))
      .toEqual({
        channel_id: "C1",
        token: "****",
        nested: { api_key: "****", url: "u" },
        list: [{ password: "****" }]
      })
  })

  it("reads a session's default dispatch from its dispatch_config", () => {
    expect(sessionDispatch({ dispatch_type: "webhook", url: "https://example.com/h" })).toEqual({
      type: "webhook",
      config: { url: "https://example.com/h" }
    })
    expect(sessionDispatch({ type: "chatplatform", channel_id: "C" })).toEqual({ type: "chatplatform", config: { channel_id: "C" } })
    expect(sessionDispatch({ url: "x" })).toEqual({ type: "none", config: {} })
  })
})
