/**
 * The connections to MCP servers, in this process: one supervised fiber per enabled server
 * connects with the official SDK (a stdio child, or streamable HTTP), lists its tools and registers
 * each in the ToolRegistry as `mcp:<server>/<tool>` (source `mcp:<server>`), follows
 * `notifications/tools/list_changed`, and reconnects on the named `reconnectBackoff` when the
 * connection drops. While a server is not connected its tools stay registered and fail at once
 * with the reason; a call in flight when the connection drops fails as soon as the SDK sees the
 * close (and in any case at the tool's timeout). Closing the scope closes every client, which
 * stops every stdio child.
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js"
import type { Tool as McpTool } from "@modelcontextprotocol/sdk/types.js"
import { Deferred, Duration, Effect, Exit, FiberMap, Option, Queue, Runtime } from "effect"
import { type EffectClass, foreignTool, type Tool } from "../agent/Tool.ts"
import { layer as ToolRegistryLive, ToolRegistry } from "../agent/Tools.ts"
import { AppConfig } from "../config/AppConfig.ts"
import { cairnVersion } from "../contract/Version.ts"
import { DatabaseInfo } from "../db/Database.ts"
import { scrub } from "../secrets/Vault.ts"
import { traced, tracedFn } from "../telemetry/Spans.ts"
import { type McpToolResult, renderResult } from "./Content.ts"
import { syncServersFile } from "./File.ts"
import { type McpStatus, mcpToolName, mcpToolSource } from "./Model.ts"
import { type McpServerRow, McpServersRepo } from "./Repo.ts"
import { loadClientSdk } from "./Sdk.ts"
import { makeSealing, type OpenedServer, secretsOf } from "./Sealing.ts"
import {
  connectionLost,
  listTools,
  mcpConfig,
  McpUnavailable,
  messageOf,
  pingEvery,
  reconnectBackoff,
  resyncEvery,
  transportFor
} from "./Transports.ts"

/** How long a stdio server may take to exit once asked (the SDK ends stdin, then signals). */
const closeGrace = Duration.seconds(6)

/**
 * What a server's tool does, from its own hints (MCP's tool annotations): read-only is `read`; a
 * tool that says its world is closed (`openWorldHint: false`) is `write`; any other (the hint's
 * default is an open world) is `egress`. Hints are a server's word, so they can only narrow a
 * tool a bot's owner already chose to connect.
 */
const mcpEffectClass = (tool: McpTool): EffectClass =>
  tool.annotations?.readOnlyHint === true ? "read" : tool.annotations?.openWorldHint === false ? "write" : "egress"

/** The live state of a server's connection in this process. */
export interface LiveState {
  readonly status: McpStatus
  readonly error: string | null
  readonly tools: ReadonlyArray<string>
  readonly lastConnectedAt: Date | null
  readonly pid: number | null
}

interface Entry {
  readonly server: OpenedServer
  state: LiveState
  /** The client while connected. */
  client: Client | undefined
  /** The tools as the server last listed them. */
  listed: ReadonlyArray<McpTool>
  /** Done once the first attempt for these settings has connected or failed. */
  readonly settled: Deferred.Deferred<void>
}

const quoted = (name: string) => `MCP server "${name}"`

export class McpConnections extends Effect.Service<McpConnections>()("cairn/McpConnections", {
  scoped: Effect.gen(function*() {
    const config = yield* mcpConfig
    const { mcpServersFile } = yield* AppConfig
    const repo = yield* McpServersRepo
    const registry = yield* ToolRegistry
    const sealing = yield* makeSealing
    const database = yield* DatabaseInfo
    const runFork = Runtime.runFork(yield* Effect.runtime<never>())
    const supervisors = yield* FiberMap.make<string>()
    const entries = new Map<string, Entry>()
    const applying = yield* Effect.makeSemaphore(1)

    const set = (entry: Entry, patch: Partial<LiveState>) => {
      entry.state = { ...entry.state, ...patch }
    }
    const settle = (entry: Entry) => Deferred.unsafeDone(entry.settled, Exit.void)

    // ---------------------------------------------------------------------------------------
    // Tools

    const notConnected = (name: string, entry: Entry | undefined) => {
      if (!entry) return `${quoted(name)} is not configured`
      if (entry.state.status === "disabled") return `${quoted(name)} is disabled`
      return `${quoted(name)} is not connected: ${entry.state.error ?? "it is still connecting"}`
    }

    /** One call, as the registry runs it (a plain async function: the registry applies the timeout). */
    const callTool = async (name: string, tool: string, args: Record<string, unknown>, signal: AbortSignal | undefined) => {
      const entry = entries.get(name)
      const client = entry?.client
      if (!entry || !client) throw new Error(notConnected(name, entry))
      const clean = (text: string) => scrub(text, secretsOf(entry.server))
      let result: McpToolResult
      try {
        // The SDK's own timeout only backs the registry's up; the signal cancels the request at the server.
        result = (await client.callTool({ name: tool, arguments: args }, undefined, {
          timeout: entry.server.timeoutMs + 1000,
          ...(signal ? { signal } : {})
        })) as McpToolResult
      } catch (error) {
        // Loaded already: the client that failed came from it.
        const { ErrorCode, McpError } = (await loadClientSdk()).types
        if (entry.client !== client || (error instanceof McpError && error.code === ErrorCode.ConnectionClosed)) {
          throw new Error(clean(`${quoted(name)} lost the connection during the call: ${entry.state.error ?? "the connection closed"}`), {
            cause: error
          })
        }
        if (error instanceof McpError && error.code === ErrorCode.RequestTimeout) {
          throw new Error(`${quoted(name)} did not answer ${tool} within ${entry.server.timeoutMs} ms`, { cause: error })
        }
        throw new Error(clean(`${quoted(name)}: ${messageOf(error)}`), { cause: error })
      }
      // The server's answer goes to the model as it is (only what Cairn itself says is scrubbed).
      const text = renderResult(result)
      // The tool's own failure: the registry answers it as `Error: <text>`.
      if (result.isError) throw new Error(text || `the tool ${tool} reported an error`)
      return text
    }

    const definitionOf = (server: OpenedServer, tool: McpTool): Tool =>
      foreignTool({
        name: mcpToolName(server.name, tool.name),
        description: tool.description ?? tool.title ?? tool.annotations?.title ?? "",
        parameters: { ...tool.inputSchema, type: "object", properties: tool.inputSchema.properties ?? {} },
        effect: mcpEffectClass(tool),
        source: mcpToolSource(server.name),
        timeoutMs: server.timeoutMs,
        execute: (args, context) => callTool(server.name, tool.name, args, context.signal)
      })

    const registeredOf = (name: string) => registry.list().filter((tool) => tool.source === mcpToolSource(name))

    /** Registers what the server lists and takes back what it no longer does. */
    const registerTools = (entry: Entry, listed: ReadonlyArray<McpTool>) =>
      Effect.gen(function*() {
        const { server } = entry
        const wanted = new Map(listed.map((tool) => [mcpToolName(server.name, tool.name), tool]))
        for (const tool of registeredOf(server.name)) {
          if (!wanted.has(tool.name)) yield* registry.unregister(tool.name)
        }
        const names: Array<string> = []
        for (const [name, tool] of wanted) {
          const taken = registry.get(name)
          if (taken && taken.source !== mcpToolSource(server.name)) {
            yield* Effect.logWarning(`The tool ${name} of ${quoted(server.name)} is not registered: ${taken.source} has that name`)
            continue
          }
          yield* registry.register(definitionOf(server, tool))
          names.push(name)
        }
        entry.listed = listed
        set(entry, { tools: names })
      })

    const unregisterAll = (name: string) => Effect.forEach(registeredOf(name), (tool) => registry.unregister(tool.name), { discard: true })

    // ---------------------------------------------------------------------------------------
    // One connection

    /** Connects, registers the tools, and ends with the reason the connection ended (as a failure). */
    const session = (entry: Entry) =>
      Effect.gen(function*() {
        const { server } = entry
        set(entry, { status: "connecting" })
        if (server.unreadable.length > 0) {
          return yield* new McpUnavailable({
            reason: `its stored secrets cannot be decrypted (the server secret changed?): ${
              server.unreadable
                .map((item) => `${item.field}.${item.name}`)
                .join(", ")
            }; set them again`,
            upMs: 0
          })
        }
        const sdk = yield* Effect.promise(loadClientSdk)
        const clean = (text: string) => scrub(text, secretsOf(server))
        const stderrTail: Array<string> = []
        const withStderr = (reason: string) => (stderrTail.length > 0 ? `${reason}; stderr: ${stderrTail.join(" | ")}` : reason)
        const transport = transportFor(sdk, server, (line) => {
          const shown = clean(line).slice(0, 500)
          stderrTail.push(shown)
          if (stderrTail.length > 3) stderrTail.shift()
          runFork(Effect.logDebug(shown).pipe(Effect.annotateLogs({ mcp_server: server.name, stream: "stderr" })))
        })
        const client = new sdk.client.Client({ name: "cairn", version: cairnVersion })
        const lost = yield* Deferred.make<string>()
        let connected = false
        // Synchronous, before the SDK fails the calls in flight: a call that fails next reads the reason.
        const loseWith = (reason: string) => {
          if (entry.client === client) {
            entry.client = undefined
            set(entry, { status: "failed", error: reason, pid: null })
          }
          Deferred.unsafeDone(lost, Exit.succeed(reason))
        }
        client.onclose = () => loseWith(withStderr("the connection closed"))
        client.onerror = (error) => {
          if (connected && server.transport === "http" && connectionLost(sdk, error)) {
            loseWith(clean(`the connection was lost: ${messageOf(error)}`))
            void client.close().catch(() => {})
          } else runFork(Effect.logDebug(`${quoted(server.name)}: ${clean(messageOf(error))}`))
        }
        const relist = yield* Queue.sliding<void>(1)
        client.setNotificationHandler(sdk.types.ToolListChangedNotificationSchema, async () => void Queue.unsafeOffer(relist, undefined))
        yield* Effect.addFinalizer(() =>
          Effect.gen(function*() {
            // An HTTP session is ended at the server too, when it still answers.
            if (transport instanceof sdk.http.StreamableHTTPClientTransport && entry.client === client) {
              yield* Effect.promise(() => transport.terminateSession().catch(() => {})).pipe(
                Effect.timeout(Duration.seconds(2)),
                Effect.ignore
              )
            }
            yield* Effect.promise(() => client.close().catch(() => {})).pipe(Effect.timeout(closeGrace), Effect.ignore)
          })
        )

        yield* Effect.tryPromise({
          try: (signal) => client.connect(transport, { signal, timeout: config.connectTimeoutMs }),
          catch: (error) => new McpUnavailable({ reason: withStderr(clean(`could not connect: ${messageOf(error)}`)), upMs: 0 })
        })
        const listed = yield* Effect.mapError(listTools(client, config.connectTimeoutMs), (reason) =>
          new McpUnavailable({ reason: clean(`could not list its tools: ${reason}`), upMs: 0 }))
        yield* registerTools(entry, listed)
        const since = Date.now()
        entry.client = client
        connected = true
        set(entry, {
          status: "connected",
          error: null,
          lastConnectedAt: new Date(since),
          pid: transport instanceof sdk.stdio.StdioClientTransport ? transport.pid : null
        })
        settle(entry)
        yield* Effect.logInfo(`${quoted(server.name)} connected: ${entry.state.tools.length} tools`)

        yield* Effect.forkScoped(
          Queue.take(relist).pipe(
            Effect.zipRight(listTools(client, config.connectTimeoutMs)),
            Effect.flatMap((tools) =>
              registerTools(entry, tools)
            ),
            Effect.catchAll((reason) =>
              Effect.logWarning(`${quoted(server.name)}: its changed tool list could not be read: ${clean(reason)}`)
            ),
            Effect.forever
          )
        )
        yield* Effect.forkScoped(
          Effect.sleep(Duration.millis(config.pingMs)).pipe(
            Effect.zipRight(
              Effect.repeat(
                Effect.tryPromise({ try: (signal) => client.ping({ signal, timeout: config.connectTimeoutMs }), catch: messageOf }),
                pingEvery(config)
              )
            ),
            Effect.catchAll((reason) =>
              Effect.sync(() => {
                loseWith(clean(`it did not answer a ping: ${reason}`))
                void client.close().catch(() => {})
              })
            )
          )
        )
        const reason = yield* Deferred.await(lost)
        return yield* new McpUnavailable({ reason, upMs: Date.now() - since })
      })

    /** Keeps a server connected: a session, then the backoff, then another, until interrupted. */
    const supervise = (entry: Entry) =>
      Effect.scoped(session(entry)).pipe(
        Effect.catchAllDefect((defect) => Effect.fail(new McpUnavailable({ reason: messageOf(defect), upMs: 0 }))),
        Effect.tapError((failure) =>
          Effect.gen(function*() {
            const repeated = entry.state.error === failure.reason
            entry.client = undefined
            set(entry, { status: "failed", error: failure.reason, pid: null })
            settle(entry)
            const line = `${quoted(entry.server.name)} is not connected: ${failure.reason}; trying again`
            yield* repeated ? Effect.logDebug(line) : Effect.logWarning(line)
          })
        ),
        Effect.retry(reconnectBackoff(config)),
        Effect.catchAllCause((cause) => Effect.logError(`${quoted(entry.server.name)}: its connection supervisor stopped`, cause))
      )

    // ---------------------------------------------------------------------------------------
    // Applying the table

    /** Makes this process follow a server's row (undefined: deleted), restarting its connection. */
    const follow = (name: string, row: McpServerRow | undefined) =>
      Effect.gen(function*() {
        const previous = entries.get(name)
        if (!row) {
          yield* FiberMap.remove(supervisors, name)
          entries.delete(name)
          yield* unregisterAll(name)
          return
        }
        const server = sealing.open(row)
        const entry: Entry = {
          server,
          state: {
            status: server.enabled ? "connecting" : "disabled",
            error: server.enabled ? (previous?.state.error ?? null) : null,
            tools: server.enabled ? (previous?.state.tools ?? []) : [],
            lastConnectedAt: previous?.state.lastConnectedAt ?? null,
            pid: null
          },
          client: undefined,
          listed: previous?.listed ?? [],
          settled: yield* Deferred.make<void>()
        }
        entries.set(name, entry)
        yield* FiberMap.remove(supervisors, name)
        if (!server.enabled) {
          yield* unregisterAll(name)
          settle(entry)
          return
        }
        // Known tools stay offered (with the new timeout) while the server connects again.
        if (entry.listed.length > 0) yield* registerTools(entry, entry.listed)
        yield* FiberMap.run(supervisors, name, supervise(entry))
      })

    // Rows are read under the permit: a row read earlier could be older than one already followed.

    /** Follows the stored row of one server now (after a change made here, or a reconnect). */
    const apply = (name: string) =>
      Effect.gen(function*() {
        yield* applying.withPermits(1)(Effect.flatMap(repo.find(name), (row) => follow(name, row)))
      })

    /** Follows every row that changed since this process last read it (another process's edits). */
    const resync = tracedFn("McpConnections.resync", () =>
      Effect.gen(function*() {
        yield* applying.withPermits(1)(
          Effect.gen(function*() {
            const rows = yield* repo.all
            const names = new Set(rows.map((row) => row.name))
            for (const row of rows) {
              const known = entries.get(row.name)
              if (!known || known.server.updatedAt.getTime() !== row.updated_at.getTime()) yield* follow(row.name, row)
            }
            for (const name of [...entries.keys()]) if (!names.has(name)) yield* follow(name, undefined)
          })
        )
      }))

    /** Waits until the current settings' first attempt has connected or failed (bounded). */
    const settled = (name: string) =>
      Effect.gen(function*() {
        const entry = entries.get(name)
        if (entry) yield* Deferred.await(entry.settled).pipe(Effect.timeout(Duration.millis(config.connectTimeoutMs + 1000)), Effect.ignore)
      })

    const state = (name: string): Option.Option<LiveState> => Option.map(Option.fromNullable(entries.get(name)), (entry) => entry.state)

    yield* syncServersFile(mcpServersFile)
    yield* resync()
    // One process on PGlite: nothing else changes the table.
    if (database.backend === "postgres") {
      yield* Effect.forkScoped(
        Effect.sleep(Duration.millis(config.resyncMs)).pipe(
          Effect.zipRight(
            Effect.repeat(
              resync().pipe(Effect.catchAllCause((cause) => Effect.logError("MCP servers: reading the table again failed", cause))),
              resyncEvery(config)
            )
          )
        )
      )
    }

    return traced("McpConnections", { apply, settled, state } as const)
  }),
  dependencies: [McpServersRepo.Default, ToolRegistryLive]
}) {}
