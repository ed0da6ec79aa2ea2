/**
 * The one tool contract (src/agent/Tool.ts), without a server: a tool declared with Schemas offers
 * the JSON Schema derived from them and decodes the model's arguments with them; a foreign tool
 * (an integration's Promise) is converted once; and a call the registry gives up (its timeout, an
 * interrupted turn) stops the tool: the real `fetch_url` closes its request, the real
 * `write_file` writes nothing.
 */
import { it } from "@effect/vitest"
import { ConfigProvider, Deferred, Duration, Effect, Exit, Fiber, Layer, Schema, TestClock } from "effect"
import * as fs from "node:fs"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import { describe, expect } from "vitest"
import { fileTools } from "../../src/agent/builtins/Files.ts"
import { webTools } from "../../src/agent/builtins/Web.ts"
import { ChoiceArgument, CountArgument, declareTool, foreignTool, type ToolContext, ToolError, ToolFailure } from "../../src/agent/Tool.ts"
import { make as makeRegistry } from "../../src/agent/Tools.ts"
import { Channels } from "../../src/channels/Channels.ts"
import { layer as AppConfigLive } from "../../src/config/AppConfig.ts"
import { Workspaces } from "../../src/workspaces/Workspaces.ts"
import { makeTestLayer } from "../support/layers.ts"

const context: ToolContext = {
  botId: "default",
  sessionId: "00000000-0000-4000-8000-000000000001",
  channelId: "00000000-0000-4000-8000-0000000000c1",
  clientId: "test",
  correlationId: "run-1"
}

const failureOf = <A>(exit: Exit.Exit<A, ToolError>) => {
  if (Exit.isSuccess(exit)) throw new Error(`expected a failure, got ${String(exit.value)}`)
  const failure = exit.cause._tag === "Fail" ? exit.cause.error : undefined
  if (!failure) throw new Error(`expected a ToolError, got ${String(exit.cause)}`)
  return failure
}

describe("a tool declared with Schemas", () => {
  const addTool = declareTool({
    name: "add",
    description: "Adds",
    effect: "read",
    parameters: Schema.Struct({
      a: Schema.Number,
      b: Schema.Number,
      times: Schema.optional(CountArgument({ min: 1, max: 3 })),
      round: Schema.optional(ChoiceArgument("up", "down"))
    }),
    success: Schema.Struct({ sum: Schema.Number }),
    handler: ({ a, b, times }) =>
      a < 0 ? new ToolFailure({ message: "a must not be negative" }) : Effect.succeed({ sum: (a + b) * (times ?? 1) })
  })

  it.effect("offers the JSON Schema derived from its parameters, with its effect class", () =>
    Effect.gen(function*() {
      const tool = yield* addTool
      expect(tool.effect).toBe("read")
      expect(tool.schema.function.name).toBe("add")
      expect(tool.schema.function.parameters).toMatchObject({
        type: "object",
        required: ["a", "b"],
        properties: { a: { type: "number" }, b: { type: "number" }, times: { type: "integer", minimum: 1, maximum: 3 } }
      })
    }))

  it.effect("decodes the arguments: a count sent as text is read and clamped, the result is JSON", () =>
    Effect.gen(function*() {
      const tool = yield* addTool
      expect(yield* tool.run({ a: 1, b: 2, times: "7" }, context)).toBe(JSON.stringify({ sum: 9 }))
    }))

  it.effect("refuses arguments its Schema refuses, naming every problem, and never runs the handler", () =>
    Effect.gen(function*() {
      const tool = yield* addTool
      const refused = failureOf(yield* Effect.exit(tool.run({ a: "one", round: "sideways" }, context)))
      expect(refused.reason).toBe("arguments")
      expect(refused.message).toMatch(/^Invalid arguments for add: /)
      expect(refused.message).toMatch(/a: Expected number/)
      expect(refused.message).toMatch(/b: is missing/)
      // A wrong choice is one line naming the choices.
      expect(refused.message).toMatch(/round: must be one of up, down(;|$)/)
    }))

  it.effect("reports the handler's own refusal as the tool's failure", () =>
    Effect.gen(function*() {
      const tool = yield* addTool
      const failed = failureOf(yield* Effect.exit(tool.run({ a: -1, b: 2 }, context)))
      expect(failed).toMatchObject({ reason: "failed", message: "a must not be negative" })
    }))
})

describe("a foreign tool (an integration's Promise form)", () => {
  it.effect("is egress unless it says otherwise; a throw is its failure; a non-object is refused", () =>
    Effect.gen(function*() {
      const tool = foreignTool({
        name: "explode",
        description: "Fails",
        parameters: { type: "object", properties: {} },
        source: "integration:test",
        execute: () => {
          throw new Error("the tool blew up")
        }
      })
      expect(tool.effect).toBe("egress")
      expect(failureOf(yield* Effect.exit(tool.run({}, context)))).toMatchObject({ reason: "failed", message: "the tool blew up" })
      expect(failureOf(yield* Effect.exit(tool.run([1, 2], context)))).toMatchObject({ reason: "arguments" })
    }))

  it.effect("is aborted through its signal when the registry's timeout gives it up", () =>
    Effect.gen(function*() {
      const aborted = yield* Deferred.make<void>()
      const registry = yield* makeRegistry({ timeoutMs: 1_000 })
      yield* registry.register(
        foreignTool({
          name: "wait_forever",
          description: "Never answers",
          parameters: { type: "object", properties: {} },
          effect: "read",
          source: "integration:test",
          execute: (_args, { signal }) =>
            new Promise((_resolve, reject) =>
              signal?.addEventListener("abort", () => {
                Effect.runSync(Deferred.succeed(aborted, undefined))
                reject(new Error("aborted"))
              })
            )
        })
      )
      const call = yield* Effect.fork(Effect.exit(registry.execute("wait_forever", {}, context)))
      yield* TestClock.adjust(Duration.seconds(1))
      const timedOut = failureOf(yield* Fiber.join(call))
      expect(timedOut).toMatchObject({ reason: "timeout", message: "Tool wait_forever timed out after 1000 ms" })
      yield* Deferred.await(aborted)
    }))
})

/** The real file tools over the real workspace service, with a channel lookup the test holds. */
const gatedFileTools = (dataDir: string, gate: Deferred.Deferred<void>, asked: Deferred.Deferred<void>) => {
  const channel = { id: context.channelId!, workspace_enabled: true }
  const channels = makeTestLayer(Channels)({
    get: () => Deferred.succeed(asked, undefined).pipe(Effect.zipRight(Deferred.await(gate)), Effect.as(channel as never))
  })
  const config = AppConfigLive.pipe(Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map([["DATA_DIR", dataDir]])))))
  return fileTools.pipe(Effect.provide(Workspaces.DefaultWithoutDependencies.pipe(Layer.provide(Layer.mergeAll(channels, config)))))
}

describe("a call given up stops the real tool", () => {
  it.live("write_file interrupted while it looks its channel up writes nothing, even once the lookup answers", () =>
    Effect.gen(function*() {
      const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "cairn-tools-"))
      const gate = yield* Deferred.make<void>()
      const asked = yield* Deferred.make<void>()
      const registry = yield* makeRegistry()
      yield* Effect.forEach(yield* gatedFileTools(dataDir, gate, asked), registry.register, { discard: true })
      const call = yield* Effect.fork(registry.execute("write_file", { path: "late.txt", content: "too late" }, context))
      yield* Deferred.await(asked)
      yield* Fiber.interrupt(call)
      yield* Deferred.succeed(gate, undefined)
      // The detached write of the old bridge ran on after this point; nothing may run now. A
      // later call through the same (open) lookup proves the lookup answers.
      yield* registry.execute("write_file", { path: "after.txt", content: "after" }, context)
      const written = fs.readdirSync(path.join(dataDir, "workspaces", context.channelId!))
      expect(written).toEqual(["after.txt"])
      fs.rmSync(dataDir, { recursive: true, force: true })
    }))

  it.live("fetch_url interrupted mid-request closes its connection to the page", () =>
    Effect.gen(function*() {
      const requested = yield* Deferred.make<void>()
      const closed = yield* Deferred.make<void>()
      // A page that never answers, as a stuck server would.
      const page = http.createServer((request) => {
        Effect.runSync(Deferred.succeed(requested, undefined))
        request.socket.on("close", () => Effect.runSync(Deferred.succeed(closed, undefined)))
      })
      yield* Effect.promise(() => new Promise<void>((resolve) => page.listen(0, "127.0.0.1", resolve)))
      const url = `http://127.0.0.1:${(page.address() as AddressInfo).port}/slow`
      const config = ConfigProvider.fromMap(new Map([["FETCH_ALLOWED_HOSTS", "127.0.0.1"], ["FETCH_TIMEOUT_SECONDS", "600"]]))
      const registry = yield* makeRegistry()
      yield* Effect.forEach(yield* Effect.withConfigProvider(webTools, config), registry.register, { discard: true })
      const call = yield* Effect.fork(registry.execute("fetch_url", { url }, context))
      yield* Deferred.await(requested)
      yield* Fiber.interrupt(call)
      // Its own timeout is ten minutes away: only the interruption can close the connection.
      yield* Deferred.await(closed)
      page.close()
    }))
})
