/**
 * Lifecycle hooks: every event reaches its callbacks with the spec's keys, callbacks never break or
 * slow the caller, the override chain, and webhook delivery to real loopback receivers.
 */
import { ConfigProvider, Context, Effect, Exit, Fiber, Layer, Logger, LogLevel, Option, Scope, TestClock, TestContext } from "effect"
import { afterEach, describe, expect, it } from "vitest"
import * as AppConfig from "../../src/config/AppConfig.ts"
import { type HookOptions, Hooks, layerWith } from "../../src/hooks/Hooks.ts"
import type { HookContext, HookEvent, HookExtras } from "../../src/hooks/Model.ts"
import { eventually, sleep, within as settles } from "../support/time.ts"
import { startReceiver, type WebhookReceiver } from "./webhookReceiver.ts"

const ids = {
  bot_id: "default",
  session_id: "7d5c2f0e-8f0a-4c55-9a55-0d6c1c6c9a11",
  channel_id: "0b8f1a52-2c3e-4d7f-8e9a-1b2c3d4e5f60",
  client_id: "cli:tester",
  correlation_id: "corr-42"
}

/** Cairn's budget events (src/budgets/), beside the spec's. */
const budgetExample = (used: number) => ({
  budget_id: "b1",
  scope: "bot",
  target: "default",
  period: "day",
  period_start: "2026-01-02T00:00:00.000Z",
  action: "block",
  limit_usd: null,
  limit_tokens: 1000,
  spent_usd: 0,
  spent_tokens: used * 1000,
  used
})
const budgetKeys = [
  "budget_id",
  "scope",
  "target",
  "period",
  "period_start",
  "action",
  "limit_usd",
  "limit_tokens",
  "spent_usd",
  "spent_tokens",
  "used"
]

const examples: { readonly [E in HookEvent]: HookExtras[E] } = {
  before_context_assembly: { user_message: "What is the weather?" },
  before_llm_call: { model: "gpt-4o-mini", message_count: 3, tools_count: 2, provider_id: "default", iteration: 1 },
  after_llm_call: {
    model: "gpt-4o-mini",
    duration_ms: 812,
    prompt_tokens: 120,
    completion_tokens: 40,
    total_tokens: 160,
    tool_calls_count: 1,
    fallback_used: true,
    fallback_model: "gpt-4o",
    iteration: 1,
    provider_id: "default"
  },
  before_tool_execution: { tool_name: "get_weather", tool_type: "core", args: { city: "Oslo" }, iteration: 1 },
  after_tool_call: { tool_name: "get_weather", tool_args: { city: "Oslo" }, duration_ms: 35 },
  after_response: { response_length: 57, tool_calls_made: 1 },
  budget_warning: budgetExample(0.8),
  budget_exceeded: budgetExample(1),
  before_transcription: { audio_format: "wav", audio_size_bytes: 32000, source: "transcribe" }
}

/** The spec's table of extra keys, written out independently of the model. */
const specKeys: { readonly [E in HookEvent]: ReadonlyArray<string> } = {
  before_context_assembly: ["user_message"],
  before_llm_call: ["model", "message_count", "tools_count", "provider_id", "iteration"],
  after_llm_call: [
    "model",
    "duration_ms",
    "prompt_tokens",
    "completion_tokens",
    "total_tokens",
    "tool_calls_count",
    "fallback_used",
    "fallback_model",
    "iteration",
    "provider_id"
  ],
  before_tool_execution: ["tool_name", "tool_type", "args", "iteration"],
  after_tool_call: ["tool_name", "tool_args", "duration_ms"],
  after_response: ["response_length", "tool_calls_made"],
  budget_warning: budgetKeys,
  budget_exceeded: budgetKeys,
  before_transcription: ["audio_format", "audio_size_bytes", "source"]
}

const broadcastEvents = [
  "before_context_assembly",
  "before_llm_call",
  "after_llm_call",
  "before_tool_execution",
  "after_tool_call",
  "after_response",
  "budget_warning",
  "budget_exceeded"
] as const

const contextFor = <E extends HookEvent>(event: E): HookContext<E> => ({ ...ids, extra: examples[event] })

interface Harness {
  readonly hooks: Hooks
  readonly logs: Array<{ level: string; message: string }>
  readonly run: <A>(effect: Effect.Effect<A>) => Promise<A>
}

const scopes: Array<Scope.CloseableScope> = []
const receivers: Array<WebhookReceiver> = []
afterEach(async () => {
  for (const scope of scopes.splice(0)) await Effect.runPromise(Scope.close(scope, Exit.void))
  for (const receiver of receivers.splice(0)) await receiver.close()
})

const harness = async (options: Partial<HookOptions> = {}, layer?: Layer.Layer<Hooks, unknown>): Promise<Harness> => {
  const logs: Harness["logs"] = []
  const capture = Logger.replace(
    Logger.defaultLogger,
    Logger.make(({ logLevel, message }) =>
      logs.push({ level: logLevel.label, message: Array.isArray(message) ? message.join(" ") : String(message) })
    )
  )
  const logging = Layer.merge(capture, Logger.minimumLogLevel(LogLevel.Debug))
  const scope = Effect.runSync(Scope.make())
  scopes.push(scope)
  const context = await Effect.runPromise(Layer.buildWithScope((layer ?? layerWith(options)).pipe(Layer.provide(logging)), scope))
  const hooks = Context.get(context, Hooks)
  const run = <A>(effect: Effect.Effect<A>) => Effect.runPromise(effect.pipe(Effect.provide(logging)))
  return { hooks, logs, run }
}

const receiver = async (mode?: Parameters<typeof startReceiver>[0]) => {
  const r = await startReceiver(mode)
  receivers.push(r)
  return r
}

/** A promise with its resolver, for callbacks that report back. */
const signal = <A>() => {
  let resolve!: (value: A) => void
  const promise = new Promise<A>((r) => (resolve = r))
  return { promise, resolve }
}

/** Deadlines only (scaled by TEST_TIME_SCALE): what these tests check is what happened and in which order. */
const within = <A>(promise: Promise<A>, ms = 10_000) => settles(promise, "a callback or a delivery", ms)

const waitUntil = (condition: () => boolean, ms = 10_000) => eventually(condition, "the condition", ms, 10)

describe("lifecycle hook callbacks", () => {
  it("deliver each fire-and-forget event with the hook context and exactly the spec's extra keys", async () => {
    const { hooks, run } = await harness()
    for (const event of broadcastEvents) {
      const received = signal<HookContext>()
      hooks.registerHook(event, (context: HookContext) => received.resolve(context))
      await run(hooks.fire(event, contextFor(event)))
      const context = await within(received.promise)
      expect(context).toEqual({ ...ids, extra: examples[event] })
      expect(Object.keys(context.extra).sort()).toEqual([...specKeys[event]].sort())
    }
  })

  it("accept sync and async callbacks and call them in registration order", async () => {
    const { hooks, run } = await harness()
    const order: Array<string> = []
    const done = signal<void>()
    hooks.registerHook("after_response", function syncOne() {
      order.push("sync")
    })
    hooks.registerHook("after_response", async function asyncOne(context) {
      order.push("async-start")
      await sleep(20)
      order.push(`async-end:${context.extra.response_length}`)
      done.resolve()
    })
    hooks.registerHook("after_response", () => void order.push("after"))
    await run(hooks.fire("after_response", contextFor("after_response")))
    await within(done.promise)
    // The async callback is not awaited before the next one runs.
    expect(order).toEqual(["sync", "async-start", "after", "async-end:57"])
  })

  it("a throwing or rejecting callback is logged and breaks neither the caller nor the next callback", async () => {
    const { hooks, logs, run } = await harness()
    const reached = signal<void>()
    hooks.registerHook("after_tool_call", function throwsAtOnce() {
      throw new Error("boom")
    })
    hooks.registerHook("after_tool_call", async function rejectsLater() {
      await sleep(5)
      throw new Error("late boom")
    })
    hooks.registerHook("after_tool_call", () => reached.resolve())
    const result = await run(
      Effect.gen(function*() {
        yield* hooks.fire("after_tool_call", contextFor("after_tool_call"))
        return "the run goes on"
      })
    )
    expect(result).toBe("the run goes on")
    await within(reached.promise)
    await waitUntil(() => logs.filter((l) => l.message.startsWith("Hook callback failed")).length === 2)
    const failures = logs.filter((l) => l.message.startsWith("Hook callback failed"))
    expect(failures.map((l) => l.message).sort()).toEqual(["Hook callback failed: boom", "Hook callback failed: late boom"])
    expect(failures.every((l) => l.level === "WARN")).toBe(true)
    expect((await run(hooks.stats)).callbacksFailed).toBe(2)
    // Still alive: the next event is dispatched as usual.
    const again = signal<void>()
    hooks.registerHook("after_response", () => again.resolve())
    await run(hooks.fire("after_response", contextFor("after_response")))
    await within(again.promise)
  })

  it("fire returns before slow callbacks run: a blocking sync callback and a promise that never settles", async () => {
    const { hooks, run } = await harness({ callbackTimeout: 200 })
    const ran = signal<void>()
    let calls = 0
    hooks.registerHook("before_llm_call", () => new Promise(() => undefined))
    hooks.registerHook("before_llm_call", () => {
      const until = performance.now() + 150
      while (performance.now() < until) {
        // busy: a sync callback that hogs the thread
      }
      if (++calls === 3) ran.resolve()
    })
    // An order, not a speed: all three fires are back before the first callback has run.
    const callsWhenFired = await run(
      Effect.gen(function*() {
        for (let i = 0; i < 3; i++) yield* hooks.fire("before_llm_call", contextFor("before_llm_call"))
        return calls
      })
    )
    expect(callsWhenFired).toBe(0)
    // And each event still reaches the slow callback afterwards.
    await within(ran.promise)
    expect(calls).toBe(3)
  })

  it("gives each callback a frozen snapshot taken when the event fired", async () => {
    const { hooks, run } = await harness()
    const received = signal<HookContext<"before_tool_execution">>()
    const mutation = signal<unknown>()
    hooks.registerHook("before_tool_execution", (context) => {
      try {
        ;(context.extra as { tool_name: string }).tool_name = "changed"
      } catch (error) {
        mutation.resolve(error)
      }
      received.resolve(context)
    })
    const args: Record<string, unknown> = { city: "Oslo" }
    const context = { ...ids, extra: { tool_name: "get_weather", tool_type: "core", args, iteration: 2 } }
    await run(hooks.fire("before_tool_execution", context))
    args.city = "changed by the caller afterwards"
    const seen = await within(received.promise)
    expect(seen.extra.args).toEqual({ city: "Oslo" })
    expect(seen.extra.tool_name).toBe("get_weather")
    expect(await within(mutation.promise)).toBeInstanceOf(TypeError)
  })

  it("unregister removes the callback; calling it twice is harmless", async () => {
    const { hooks, run } = await harness()
    const calls: Array<string> = []
    const unregister = hooks.registerHook("after_response", () => void calls.push("removed"))
    const kept = signal<void>()
    hooks.registerHook("after_response", () => {
      calls.push("kept")
      kept.resolve()
    })
    unregister()
    unregister()
    expect(hooks.registered("after_response")).toBe(1)
    await run(hooks.fire("after_response", contextFor("after_response")))
    await within(kept.promise)
    expect(calls).toEqual(["kept"])
  })

  it("refuses an unknown event or a non-function at registration", async () => {
    const { hooks } = await harness()
    expect(() => hooks.registerHook("after_llm" as HookEvent, () => undefined)).toThrow(/Unknown hook event "after_llm"/)
    expect(() => hooks.registerHook("after_response", "nope" as unknown as () => void)).toThrow(TypeError)
  })
})

describe("the before_transcription override chain", () => {
  const context = contextFor("before_transcription")
  const audio = new Uint8Array([82, 73, 70, 70])

  it("answers none when no callback is registered", async () => {
    const { hooks, run } = await harness()
    expect(await run(hooks.override("before_transcription", context, audio))).toEqual(Option.none())
  })

  it("falls through null, undefined, failures and non-strings; the first string wins and ends the chain", async () => {
    const { hooks, logs, run } = await harness()
    const called: Array<string> = []
    hooks.registerHook("before_transcription", () => {
      called.push("null")
      return null
    })
    hooks.registerHook("before_transcription", async () => {
      called.push("undefined")
      return undefined
    })
    hooks.registerHook("before_transcription", function fails() {
      called.push("throws")
      throw new Error("stt plugin down")
    })
    hooks.registerHook(
      "before_transcription",
      (() => {
        called.push("number")
        return 42
      }) as unknown as () => string
    )
    hooks.registerHook("before_transcription", async (ctx) => {
      called.push("wins")
      return `transcribed ${ctx.extra.audio_size_bytes} bytes of ${ctx.extra.audio_format} starting ${String.fromCharCode(...ctx.audio)}`
    })
    hooks.registerHook("before_transcription", () => {
      called.push("never")
      return "too late"
    })
    const result = await run(hooks.override("before_transcription", context, audio))
    expect(result).toEqual(Option.some("transcribed 32000 bytes of wav starting RIFF"))
    expect(called).toEqual(["null", "undefined", "throws", "number", "wins"])
    expect(logs.some((l) => l.message === "Hook callback failed: stt plugin down")).toBe(true)
  })

  it("answers none when every callback returns null", async () => {
    const { hooks, run } = await harness()
    hooks.registerHook("before_transcription", () => null)
    hooks.registerHook("before_transcription", async () => null)
    expect(await run(hooks.override("before_transcription", context, audio))).toEqual(Option.none())
  })

  it("moves on from a callback that does not answer within the override timeout", async () => {
    const { hooks, run } = await harness({ overrideTimeout: 100 })
    const called: Array<string> = []
    hooks.registerHook("before_transcription", () => (called.push("silent"), new Promise<string>(() => undefined)))
    hooks.registerHook("before_transcription", () => (called.push("second"), "second"))
    // On the test clock: the second callback is asked only once the first's timeout has passed, not before.
    const outcome = await run(
      Effect.gen(function*() {
        const overriding = yield* Effect.fork(hooks.override("before_transcription", context, audio))
        while ((yield* TestClock.sleeps()).length === 0) yield* Effect.yieldNow()
        yield* TestClock.adjust("99 millis")
        const before = [...called]
        yield* TestClock.adjust("1 millis")
        return { before, answer: yield* Fiber.join(overriding) }
      }).pipe(Effect.provide(TestContext.TestContext))
    )
    expect(outcome).toEqual({ before: ["silent"], answer: Option.some("second") })
    expect(called).toEqual(["silent", "second"])
  })
})

const isoWithOffset = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?[+-]\d\d:\d\d$/

describe("hook webhooks (HOOK_WEBHOOK_URLS)", () => {
  it("posts every event to each URL in the spec's payload shape", async () => {
    const first = await receiver()
    const second = await receiver({ status: 200 })
    const { hooks, run } = await harness({ webhookUrls: [`${first.url}/hooks`, `${second.url}/in?token=s3cret`] })
    const before = Date.now()
    for (const event of broadcastEvents) await run(hooks.fire(event, contextFor(event)))
    await run(hooks.override("before_transcription", contextFor("before_transcription"), new Uint8Array([1, 2, 3])))
    const events = [...broadcastEvents, "before_transcription"] as const
    for (const r of [first, second]) {
      const requests = await r.waitFor(events.length)
      expect(requests.map((q) => q.method)).toEqual(events.map(() => "POST"))
      expect(requests.every((q) => q.headers["content-type"] === "application/json")).toBe(true)
      const bodies = requests.map((q) => JSON.parse(q.body))
      expect(bodies.map((b) => b.event).sort()).toEqual([...events].sort())
      for (const body of bodies) {
        const event = body.event as HookEvent
        expect(Object.keys(body).sort()).toEqual(["context", "data", "event", "timestamp"])
        expect(body.context).toEqual(ids)
        expect(body.data).toEqual(examples[event])
        expect(Object.keys(body.data).sort()).toEqual([...specKeys[event]].sort())
        expect(body.timestamp).toMatch(isoWithOffset)
        const at = Date.parse(body.timestamp)
        expect(at).toBeGreaterThanOrEqual(before - 5)
        expect(at).toBeLessThanOrEqual(Date.now())
      }
    }
    expect(first.requests[0]!.url).toBe("/hooks")
    expect(second.requests[0]!.url).toBe("/in?token=s3cret")
    const delivered = async () => (await run(hooks.stats)).webhooksDelivered
    await eventually(async () => (await delivered()) >= events.length * 2, "the deliveries counted", 10_000, 10)
    expect(await delivered()).toBe(events.length * 2)
  })

  it("sends the after_tool_call example of the spec exactly, extra keys dropped and missing ones null", async () => {
    const r = await receiver()
    const { hooks, run } = await harness({ webhookUrls: [r.url] })
    const extra = { tool_name: "search", tool_args: { q: "cairn" }, duration_ms: 12, internal: "not for the wire" }
    await run(hooks.fire("after_tool_call", { ...ids, correlation_id: null, extra }))
    await run(hooks.fire("after_llm_call", { ...ids, extra: { model: "m" } as HookExtras["after_llm_call"] }))
    const [toolCall, llmCall] = (await r.waitFor(2)).map((q) => JSON.parse(q.body))
    expect(toolCall).toEqual({
      event: "after_tool_call",
      timestamp: expect.stringMatching(isoWithOffset),
      context: { ...ids, correlation_id: null },
      data: { tool_name: "search", tool_args: { q: "cairn" }, duration_ms: 12 }
    })
    expect(Object.keys(llmCall.data).sort()).toEqual([...specKeys.after_llm_call].sort())
    expect(llmCall.data.model).toBe("m")
    expect(llmCall.data.prompt_tokens).toBeNull()
  })

  it("abandons a receiver that hangs after the timeout and goes on with the next delivery", async () => {
    const hanging = await receiver("hang")
    const { hooks, logs, run } = await harness({
      webhookUrls: [`${hanging.url}/slow?token=s3cret`],
      webhookTimeout: 300,
      webhookConcurrency: 1
    })
    // Both fires are back before either delivery has reached the receiver: they wait for none.
    const arrivedWhenFired = await run(
      Effect.gen(function*() {
        yield* hooks.fire("after_response", contextFor("after_response"))
        yield* hooks.fire("after_response", contextFor("after_response"))
        return hanging.requests.length
      })
    )
    expect(arrivedWhenFired).toBe(0)
    const [first, second] = await hanging.waitFor(2)
    await waitUntil(() => second!.closedAt !== undefined)
    // Each POST is cut by the sender (the receiver never answers: "no answer within", below); the
    // single worker takes the next one only once the first is cut.
    expect(first!.closedAt).toBeDefined()
    expect(second!.receivedAt).toBeGreaterThanOrEqual(first!.closedAt!)
    const stats = await run(hooks.stats)
    expect(stats.webhooksFailed).toBe(2)
    const failures = logs.filter((l) => l.message.startsWith("Hook webhook delivery failed"))
    expect(failures.length).toBe(2)
    expect(failures[0]!.message).toContain("no answer within")
    // A warning once, then debug: a dead receiver does not flood the log.
    expect(failures.map((l) => l.level)).toEqual(["WARN", "DEBUG"])
    expect(logs.some((l) => l.message.includes("s3cret"))).toBe(false)
  })

  it("bounds what a slow receiver can hold: one in flight per worker, a fixed queue, the rest dropped", async () => {
    const hanging = await receiver("hang")
    const { hooks, run } = await harness({
      webhookUrls: [hanging.url],
      webhookTimeout: 200,
      webhookConcurrency: 1,
      webhookQueueCapacity: 2
    })
    await run(Effect.forEach(Array.from({ length: 10 }), () => hooks.fire("after_response", contextFor("after_response"))))
    const afterFire = await run(hooks.stats)
    expect(afterFire.webhooksDropped).toBeGreaterThanOrEqual(7)
    await waitUntil(
      () => hanging.requests.length + afterFire.webhooksDropped >= 10 && hanging.requests.every((q) => q.closedAt !== undefined),
      5_000
    )
    const stats = await run(hooks.stats)
    expect(stats.webhooksFailed + stats.webhooksDropped).toBe(10)
    expect(hanging.requests.length).toBe(10 - stats.webhooksDropped)
  })

  it("a hanging receiver delays no other URL", async () => {
    const hanging = await receiver("hang")
    const healthy = await receiver()
    // The hanging URL's first POST is held far longer than the test waits for the healthy one.
    const { hooks, run } = await harness({ webhookUrls: [hanging.url, healthy.url], webhookTimeout: 600_000, webhookConcurrency: 1 })
    for (let i = 0; i < 3; i++) await run(hooks.fire("after_response", contextFor("after_response")))
    await healthy.waitFor(3)
    // An order: all three reached the healthy URL while the hanging one still held its first.
    expect(hanging.requests).toHaveLength(1)
    expect(hanging.requests[0]!.closedAt).toBeUndefined()
  })

  it("swallows error statuses and unreachable receivers", async () => {
    const failing = await receiver({ status: 500 })
    const closed = await receiver()
    const closedUrl = closed.url
    await closed.close()
    receivers.splice(receivers.indexOf(closed), 1)
    const { hooks, logs, run } = await harness({ webhookUrls: [failing.url, closedUrl] })
    await run(hooks.fire("after_response", contextFor("after_response")))
    await waitUntil(() => logs.filter((l) => l.message.startsWith("Hook webhook delivery failed")).length === 2)
    const messages = logs.filter((l) => l.message.startsWith("Hook webhook delivery failed")).map((l) => l.message)
    expect(messages).toContain("Hook webhook delivery failed: HTTP 500")
    expect(messages.some((m) => m.includes("ECONNREFUSED"))).toBe(true)
  })

  it("reads the URLs from HOOK_WEBHOOK_URLS in the default layer", async () => {
    const r = await receiver()
    const config = AppConfig.layer.pipe(
      Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map([["HOOK_WEBHOOK_URLS", `${r.url}/a, ${r.url}/b`]]))))
    )
    const { hooks, run } = await harness({}, Hooks.Default.pipe(Layer.provide(config)))
    await run(hooks.fire("before_context_assembly", contextFor("before_context_assembly")))
    const requests = await r.waitFor(2)
    expect(requests.map((q) => q.url).sort()).toEqual(["/a", "/b"])
  })
})
