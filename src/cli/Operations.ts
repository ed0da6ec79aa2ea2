/** `cairn backup` (made on the server, downloaded with a progress bar) and `cairn status`. */
import { Command, Options } from "@effect/cli"
import { FileSystem } from "@effect/platform"
import { Console, Effect, Option, Schedule, Stream } from "effect"
import { cairnVersion } from "../contract/Version.ts"
import type { Backup } from "../operations/Model.ts"
import { connect, connectionOptions } from "./Connection.ts"
import { describeFailure, fail, jsonOption, printJson, style, table } from "./Output.ts"
import { makeProgress } from "./Progress.ts"

/** How often a running backup is asked how far it got. */
const backupPoll = Schedule.spaced("300 millis")

export const backupCommand = Command.make(
  "backup",
  {
    ...connectionOptions,
    output: Options.file("output").pipe(
      Options.withAlias("o"),
      Options.withDescription("Where to write the archive (default: its name on the server, here)"),
      Options.optional
    ),
    json: jsonOption
  },
  (flags) =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const { client, streams } = yield* connect(flags)
      const started = yield* client.operations.backup()
      const tables = makeProgress({ label: "backup ", total: Math.max(started.tables_total, 1), unit: "items", noun: "tables" })
      let shown = 0
      const finished = yield* client.operations.getBackup({ path: { id: started.id } }).pipe(
        Effect.tap((backup) =>
          Effect.sync(() => {
            tables.advance(backup.tables_done - shown)
            shown = backup.tables_done
          })
        ),
        Effect.repeat(Schedule.passthrough(Schedule.whileInput(backupPoll, (backup: Backup) => backup.status === "running")))
      )
      tables.finish()
      if (finished.status !== "complete") return yield* fail(`the backup ${finished.status}${finished.error ? `: ${finished.error}` : ""}`)
      const target = Option.getOrElse(flags.output, () => finished.file_name)
      const archive = yield* streams.backupArchive(finished.id)
      const download = makeProgress({
        label: "download",
        total: Number.isFinite(archive.length) ? archive.length : (finished.size_bytes ?? 0),
        unit: "bytes"
      })
      yield* archive.bytes.pipe(
        Stream.tap((chunk) => Effect.sync(() => download.advance(chunk.length))),
        Stream.run(fs.sink(target))
      )
      download.finish()
      const summary = {
        id: finished.id,
        file: target,
        size_bytes: finished.size_bytes,
        rows: finished.rows_written,
        files: finished.files_written,
        schema_version: finished.schema_version
      }
      if (flags.json) return yield* printJson(summary)
      yield* Console.log(
        `${
          style.green("Saved")
        } ${target}: ${finished.rows_written} rows, ${finished.files_written} files (schema ${finished.schema_version})`
      )
    })
).pipe(Command.withDescription("Back the server up and download the archive (restore it with `cairn restore`)"))

/** An MCP server's connection in the status words integrations use (docs/integrations.md, "Status"). */
const mcpWords = (status: string, error: string | null) =>
  status === "failed" ? `failing: ${error ?? "unknown error"}` : status === "disabled" ? "paused: disabled" : status

export const statusCommand = Command.make("status", { ...connectionOptions, json: jsonOption }, (flags) =>
  Effect.gen(function*() {
    const { baseUrl, client } = yield* connect(flags)
    const health = yield* client.health.health().pipe(Effect.either)
    const me = yield* client.auth.me().pipe(Effect.option)
    const integrations = yield* client.integrations.list().pipe(
      Effect.map(({ integrations }) => integrations),
      Effect.either
    )
    const mcpServers = yield* client.mcpServers.list().pipe(
      Effect.map(({ servers }) => servers),
      Effect.either
    )
    const report = {
      url: baseUrl,
      client_version: cairnVersion,
      health: health._tag === "Right" ? "ok" : describeFailure(health.left),
      server_version: health._tag === "Right" ? health.right.version : null,
      credentials: Option.match(me, { onNone: () => null, onSome: ({ kind, scopes }) => ({ kind, scopes: scopes.length }) }),
      integrations: integrations._tag === "Right"
        ? integrations.right.map(({ error, health, id, status, version, workers }) => ({
          id,
          status: health.words,
          state: health.state,
          configuration: status,
          version,
          error,
          workers: workers.length
        }))
        : null,
      mcp_servers: mcpServers._tag === "Right"
        ? mcpServers.right.map(({ error, name, status, tools, transport }) => ({
          name,
          transport,
          status: mcpWords(status, error),
          tools: tools.length,
          error
        }))
        : null
    }
    if (flags.json) yield* printJson(report)
    else {
      const ok = report.health === "ok"
      yield* Console.log(
        [
          `${style.bold("server")}       ${baseUrl}  ${ok ? style.green("healthy") : style.red(report.health)}`,
          `${style.bold("version")}      ${report.server_version ?? "?"} (this client ${cairnVersion})`,
          `${style.bold("credentials")}  ${
            report.credentials
              ? `${report.credentials.kind.replace("_", " ")}, ${report.credentials.scopes} scopes`
              : style.yellow("none accepted")
          }`
        ].join("\n")
      )
      if (integrations._tag === "Right") {
        yield* Console.log(
          `\n${
            table(
              ["INTEGRATION", "VERSION", "WORKERS", "STATUS"],
              integrations.right.map((i) => [i.id, i.version ?? "", String(i.workers.length), i.health.words])
            )
          }`
        )
      } else yield* Console.log(style.dim(`integrations: ${describeFailure(integrations.left)}`))
      if (mcpServers._tag === "Right") {
        if (mcpServers.right.length > 0) {
          yield* Console.log(
            `\n${
              table(
                ["MCP SERVER", "TRANSPORT", "TOOLS", "STATUS"],
                mcpServers.right.map((m) => [m.name, m.transport, String(m.tools.length), mcpWords(m.status, m.error)])
              )
            }`
          )
        }
      } else yield* Console.log(style.dim(`mcp servers: ${describeFailure(mcpServers.left)}`))
    }
    // The exit code says what the report does: a server down, credentials refused, an integration failing.
    if (health._tag === "Left") return yield* fail(`the server is not healthy: ${report.health}`)
    if (Option.isNone(me)) return yield* fail(`${baseUrl} refused these credentials (cairn login signs in)`)
    const failing = [
      ...(integrations._tag === "Right" ? integrations.right.filter((i) => i.health.state === "failing").map((i) => i.id) : []),
      ...(mcpServers._tag === "Right" ? mcpServers.right.filter((m) => m.status === "failed").map((m) => `mcp:${m.name}`) : [])
    ]
    if (failing.length > 0) return yield* fail(`failing: ${failing.join(", ")}`)
  })).pipe(
    Command.withDescription(
      "The server's health and version, these credentials, its integrations and its MCP servers; exits 1 when any is not well"
    )
  )
