/**
 * MCP_SERVERS_FILE: a YAML file listing MCP servers in the API's shape under `servers:`, synced
 * into the table at startup as source `file` (read-only over the API). `${NAME}` in a value is the
 * setting NAME from the environment (or .env), so secrets need not be written in the file. A
 * server the file no longer lists is removed; a file that cannot be read or parsed changes
 * nothing (its servers stay as they were); an entry that does not decode is skipped, named in
 * the log.
 */
import { Config, Effect, Either, Option, ParseResult, Schema } from "effect"
import * as fs from "node:fs"
import YAML from "yaml"
import { tracedFn } from "../telemetry/Spans.ts"
import { CreateMcpServer } from "./Model.ts"
import { McpServersRepo } from "./Repo.ts"
import { makeSealing, sameSettings } from "./Sealing.ts"

const ServersFile = Schema.Struct({ servers: Schema.optionalWith(Schema.Array(Schema.Unknown), { default: () => [] }) })

const reference = /\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g

/** Every `${NAME}` in the strings of a value. */
const referencesIn = (value: unknown, into: Set<string>): Set<string> => {
  if (typeof value === "string") { for (const match of value.matchAll(reference)) into.add(match[1]!) }
  else if (Array.isArray(value)) value.forEach((item) => referencesIn(item, into))
  else if (value && typeof value === "object") Object.values(value).forEach((item) => referencesIn(item, into))
  return into
}

/** The value with each `${NAME}` replaced (every name is known by then). */
const substitute = (value: unknown, values: ReadonlyMap<string, string>): unknown => {
  if (typeof value === "string") return value.replace(reference, (_, name: string) => values.get(name) ?? "")
  if (Array.isArray(value)) return value.map((item) => substitute(item, values))
  if (value && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, substitute(item, values)]))
  }
  return value
}

const decodeServer = Schema.decodeUnknownEither(CreateMcpServer, { errors: "all" })

const entryName = (raw: unknown, index: number) =>
  raw && typeof raw === "object" && typeof (raw as { name?: unknown }).name === "string" ? (raw as { name: string }).name : `#${index + 1}`

/** The file's servers; a failure (unreadable, not YAML, no `servers` list) as the reason. */
export const readServersFile = (file: string) =>
  Effect.gen(function*() {
    const parsed = Either.try({
      try: () => YAML.parse(fs.readFileSync(file, "utf8")) ?? {},
      catch: (error) => (error instanceof Error ? error.message : String(error))
    })
    if (Either.isLeft(parsed)) return Either.left(parsed.left)
    const shape = Schema.decodeUnknownEither(ServersFile)(parsed.right)
    if (Either.isLeft(shape)) {
      return Either.left(`expected a list under "servers": ${ParseResult.TreeFormatter.formatErrorSync(shape.left)}`)
    }
    const servers: Array<CreateMcpServer> = []
    for (const [index, raw] of shape.right.servers.entries()) {
      const where = `MCP server ${entryName(raw, index)} in ${file}`
      const values = new Map<string, string>()
      const missing: Array<string> = []
      for (const name of referencesIn(raw, new Set())) {
        const value = yield* Effect.orElseSucceed(Config.option(Config.string(name)), () => Option.none<string>())
        if (Option.isSome(value)) values.set(name, value.value)
        else missing.push(name)
      }
      if (missing.length > 0) {
        yield* Effect.logError(`${where} is skipped: ${missing.map((name) => `\${${name}}`).join(", ")} not set`)
        continue
      }
      const server = decodeServer(substitute(raw, values))
      if (Either.isLeft(server)) {
        // The messages name fields, never their values (a secret may be among them).
        const problems = ParseResult.ArrayFormatter.formatErrorSync(server.left).map(
          (issue) => `${issue.path.join(".") || "entry"}: ${issue.message.replace(/, actual [\s\S]*$/, "")}`
        )
        yield* Effect.logError(`${where} is skipped: ${problems.join("; ")}`)
        continue
      }
      if (servers.some((known) => known.name === server.right.name)) {
        yield* Effect.logError(`${where} is skipped: the file names it twice`)
        continue
      }
      servers.push(server.right)
    }
    return Either.right(servers)
  })

/** Startup: the file's servers into the table (before any connection is made). */
export const syncServersFile = tracedFn("McpServers.syncFile", (file: Option.Option<string>) =>
  Effect.gen(function*() {
    const repo = yield* McpServersRepo
    const sealing = yield* makeSealing
    if (Option.isNone(file)) {
      const removed = yield* repo.removeFileServersExcept([])
      if (removed.length > 0) {
        yield* Effect.logInfo(`MCP_SERVERS_FILE is not set: removed the servers it had listed (${removed.join(", ")})`)
      }
      return
    }
    const read = yield* readServersFile(file.value)
    if (Either.isLeft(read)) {
      yield* Effect.logError(`MCP_SERVERS_FILE ${file.value} is not loaded (its servers stay as they were): ${read.left}`)
      return
    }
    for (const server of read.right) {
      const stored = yield* repo.find(server.name)
      if (stored?.source === "api") {
        yield* Effect.logWarning(`MCP server ${server.name} of ${file.value} is not loaded: a server of that name was made over the API`)
        continue
      }
      // Unchanged servers are not written: each write reconnects the server in every process.
      if (stored && sameSettings(sealing.open(stored), server)) continue
      yield* repo.upsertFromFile(sealing.record(server.name, server, "file"))
    }
    const removed = yield* repo.removeFileServersExcept(read.right.map((server) => server.name))
    yield* Effect.logDebug(
      `MCP servers synced from ${file.value}: ${read.right.map((server) => server.name).join(", ") || "(none)"}` +
        (removed.length > 0 ? `; removed ${removed.join(", ")}` : "")
    )
  }))
