/**
 * MCP servers as the admin API sees them: stored with their env and header values sealed, shown
 * with them masked and with the live state of their connection in this process. A change here
 * (re)connects or disconnects the server at once and answers once its first attempt has settled.
 * Servers of MCP_SERVERS_FILE are read-only here (409): the file is where they change.
 */
import { Effect, Option } from "effect"
import { AppConfig } from "../config/AppConfig.ts"
import { ValidationError, ValidationIssue } from "../contract/Errors.ts"
import { isMaskOf, MASK } from "../secrets/Mask.ts"
import { sameOrigin } from "../secrets/UrlSecrets.ts"
import { traced } from "../telemetry/Spans.ts"
import { type LiveState, McpConnections } from "./Connections.ts"
import { McpServerConflict, McpServerNotFound } from "./Errors.ts"
import { type CreateMcpServer, McpServerList, McpServerView, type UpdateMcpServer } from "./Model.ts"
import { type McpServerRow, McpServersRepo } from "./Repo.ts"
import { makeSealing, maskedField, type OpenedServer } from "./Sealing.ts"

/** A value as a read shows a secret: the bare mask, or the mask and four characters. */
const looksMasked = (value: string) => value === MASK || (value.startsWith(MASK) && value.length === MASK.length + 4)

const moved = "url moves to another origin (scheme, host, port), where the stored headers are not sent"

export class McpServers extends Effect.Service<McpServers>()("cairn/McpServers", {
  effect: Effect.gen(function*() {
    const repo = yield* McpServersRepo
    const connections = yield* McpConnections
    const sealing = yield* makeSealing
    const { mcpServersFile } = yield* AppConfig

    const notFound = (name: string) => new McpServerNotFound({ detail: `MCP server not found: ${name}` })
    const fromFile = (name: string) =>
      new McpServerConflict({
        detail: `MCP server ${name} is configured by MCP_SERVERS_FILE${
          Option.match(mcpServersFile, { onNone: () => "", onSome: (file) => ` (${file})` })
        }: change it there`
      })

    const view = (server: OpenedServer): McpServerView => {
      const live: LiveState = Option.getOrElse(connections.state(server.name), () => ({
        status: server.enabled ? ("connecting" as const) : ("disabled" as const),
        error: null,
        tools: [],
        lastConnectedAt: null,
        pid: null
      }))
      return new McpServerView({
        name: server.name,
        transport: server.transport,
        command: server.command,
        args: server.args,
        env: maskedField(server, "env"),
        url: server.url,
        headers: maskedField(server, "headers"),
        enabled: server.enabled,
        timeout_ms: server.timeoutMs,
        source: server.source,
        status: live.status,
        error: live.error,
        tools: live.tools,
        last_connected_at: live.lastConnectedAt,
        pid: live.pid,
        created_at: server.createdAt,
        updated_at: server.updatedAt
      })
    }

    const find = (name: string) => Effect.flatMap(repo.find(name), (row) => (row ? Effect.succeed(row) : Effect.fail(notFound(name))))

    const current = (name: string) => Effect.map(find(name), (row) => view(sealing.open(row)))

    /**
     * The values to store: one sent back masked, as a read showed it, keeps the stored value; a
     * masked value with nothing stored to keep is refused (it would be stored as the mask).
     */
    const unmask = (
      field: "env" | "headers",
      sent: Readonly<Record<string, string>>,
      stored: Readonly<Record<string, string>>,
      issues: Array<ValidationIssue>
    ) => {
      const kept: Array<string> = []
      const values: Record<string, string> = {}
      for (const [name, value] of Object.entries(sent)) {
        const known = stored[name]
        if (known !== undefined && isMaskOf(value, known)) {
          values[name] = known
          kept.push(name)
        } else if (looksMasked(value)) {
          issues.push(
            new ValidationIssue({
              loc: ["body", field, name],
              msg: `${name} was sent masked and there is no stored value to keep: send it in the clear`,
              type: "value_error"
            })
          )
        } else values[name] = value
      }
      return { values, kept }
    }

    /** After a write: connect (or disconnect) now, and answer once the first attempt has settled. */
    const applied = (name: string) =>
      Effect.gen(function*() {
        yield* connections.apply(name)
        yield* connections.settled(name)
        return yield* current(name)
      })

    const list = () =>
      Effect.gen(function*() {
        const rows = yield* repo.all
        return new McpServerList({ servers: rows.map((row) => view(sealing.open(row))) })
      })

    const get = (name: string) => current(name)

    const create = (input: CreateMcpServer) =>
      Effect.gen(function*() {
        const issues: Array<ValidationIssue> = []
        const env = unmask("env", input.env, {}, issues)
        const headers = unmask("headers", input.headers, {}, issues)
        if (issues.length > 0) return yield* new ValidationError({ detail: issues })
        const inserted = yield* repo.insert(sealing.record(input.name, { ...input, env: env.values, headers: headers.values }, "api"))
        if (!inserted) return yield* new McpServerConflict({ detail: `An MCP server named ${input.name} exists` })
        return yield* applied(input.name)
      })

    const update = (name: string, input: UpdateMcpServer) =>
      Effect.gen(function*() {
        const row: McpServerRow = yield* find(name)
        if (row.source === "file") return yield* fromFile(name)
        const stored = sealing.open(row)
        const issues: Array<ValidationIssue> = []
        const env = unmask("env", input.env, stored.env, issues)
        const headers = unmask("headers", input.headers, stored.headers, issues)
        // A stored header goes only where it went before: a new origin must be given it again.
        if (stored.url !== null && input.url !== undefined && !sameOrigin(stored.url, input.url)) {
          for (const header of headers.kept) {
            issues.push(
              new ValidationIssue({
                loc: ["body", "headers", header],
                msg: `${moved}: send ${header} again in the clear, or leave it out`,
                type: "value_error"
              })
            )
          }
        }
        if (issues.length > 0) return yield* new ValidationError({ detail: issues })
        const updated = yield* repo.update(sealing.record(name, { ...input, env: env.values, headers: headers.values }, "api"))
        if (!updated) return yield* notFound(name)
        return yield* applied(name)
      })

    const remove = (name: string) =>
      Effect.gen(function*() {
        const row = yield* find(name)
        if (row.source === "file") return yield* fromFile(name)
        if (!(yield* repo.remove(name))) return yield* notFound(name)
        yield* connections.apply(name)
      })

    const reconnect = (name: string) =>
      Effect.gen(function*() {
        const row = yield* find(name)
        if (!row.enabled) return yield* new McpServerConflict({ detail: `MCP server ${name} is disabled: enable it to connect` })
        return yield* applied(name)
      })

    return traced("McpServers", { list, get, create, update, remove, reconnect } as const)
  }),
  dependencies: [McpServersRepo.Default, McpConnections.Default]
}) {}
