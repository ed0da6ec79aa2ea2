/** SQL for the MCP servers Cairn connects to; env and header values arrive here sealed. */
import { SqlClient } from "@effect/sql"
import { Effect, Schema } from "effect"
import { decodeRows, firstRow, repository } from "../db/Repository.ts"
import { McpSource, McpTransport } from "./Model.ts"

/** jsonb comes back parsed from PostgreSQL and as text from some paths; accept both. */
const Json = <A, I>(schema: Schema.Schema<A, I>) => Schema.Union(schema, Schema.parseJson(schema))
const Sealed = Json(Schema.Record({ key: Schema.String, value: Schema.String }))

export const McpServerRow = Schema.Struct({
  name: Schema.String,
  transport: McpTransport,
  command: Schema.NullOr(Schema.String),
  args: Json(Schema.Array(Schema.String)),
  /** Name → sealed value. */
  env_sealed: Sealed,
  url: Schema.NullOr(Schema.String),
  /** Name → sealed value. */
  headers_sealed: Sealed,
  enabled: Schema.Boolean,
  timeout_ms: Schema.Number,
  source: McpSource,
  created_at: Schema.DateFromSelf,
  updated_at: Schema.DateFromSelf
})
export type McpServerRow = typeof McpServerRow.Type

/** What a write stores (the timestamps are the database's). */
export type McpServerRecord = Omit<McpServerRow, "created_at" | "updated_at">

export class McpServersRepo extends Effect.Service<McpServersRepo>()("cairn/McpServersRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rows = decodeRows(McpServerRow)
    const columns =
      sql`name, transport, command, args, env_sealed, url, headers_sealed, enabled, timeout_ms, source, created_at, updated_at`
    const values = (row: McpServerRecord) =>
      sql`${row.name}, ${row.transport}, ${row.command}, ${JSON.stringify(row.args)}::jsonb, ${JSON.stringify(row.env_sealed)}::jsonb,
          ${row.url}, ${JSON.stringify(row.headers_sealed)}::jsonb, ${row.enabled}, ${row.timeout_ms}, ${row.source}`
    return repository("McpServersRepo", {
      all: rows(sql`SELECT ${columns} FROM mcp_servers ORDER BY name`),
      find: (name: string) => rows(sql`SELECT ${columns} FROM mcp_servers WHERE name = ${name}`).pipe(Effect.map(firstRow)),
      /** false when the name is taken. */
      insert: (row: McpServerRecord) =>
        Effect.map(
          sql`INSERT INTO mcp_servers (name, transport, command, args, env_sealed, url, headers_sealed, enabled, timeout_ms, source)
              VALUES (${values(row)}) ON CONFLICT (name) DO NOTHING RETURNING name`,
          (inserted) => inserted.length > 0
        ),
      /** Replaces a server of the API; false when there is none (or it is the file's). */
      update: (row: McpServerRecord) =>
        Effect.map(
          sql`UPDATE mcp_servers SET transport = ${row.transport}, command = ${row.command}, args = ${JSON.stringify(row.args)}::jsonb,
                env_sealed = ${JSON.stringify(row.env_sealed)}::jsonb, url = ${row.url},
                headers_sealed = ${JSON.stringify(row.headers_sealed)}::jsonb, enabled = ${row.enabled},
                timeout_ms = ${row.timeout_ms}, updated_at = now()
              WHERE name = ${row.name} AND source = 'api' RETURNING name`,
          (updated) => updated.length > 0
        ),
      /** Deletes a server of the API; false when there is none (or it is the file's). */
      remove: (name: string) =>
        Effect.map(sql`DELETE FROM mcp_servers WHERE name = ${name} AND source = 'api' RETURNING name`, (removed) => removed.length > 0),
      /** A server of the file, inserted or replaced, unless the API holds that name. */
      upsertFromFile: (row: McpServerRecord) =>
        sql`INSERT INTO mcp_servers (name, transport, command, args, env_sealed, url, headers_sealed, enabled, timeout_ms, source)
            VALUES (${values({ ...row, source: "file" })})
            ON CONFLICT (name) DO UPDATE SET transport = EXCLUDED.transport, command = EXCLUDED.command, args = EXCLUDED.args,
              env_sealed = EXCLUDED.env_sealed, url = EXCLUDED.url, headers_sealed = EXCLUDED.headers_sealed,
              enabled = EXCLUDED.enabled, timeout_ms = EXCLUDED.timeout_ms, updated_at = now()
            WHERE mcp_servers.source = 'file'`.pipe(Effect.asVoid),
      /** Drops the file's servers it no longer lists; answers their names. */
      removeFileServersExcept: (names: ReadonlyArray<string>) =>
        Effect.map(
          names.length === 0
            ? sql`DELETE FROM mcp_servers WHERE source = 'file' RETURNING name`
            : sql`DELETE FROM mcp_servers WHERE source = 'file' AND name NOT IN ${sql.in(names)} RETURNING name`,
          (removed) => removed.map((row) => String(row.name))
        )
    })
  })
}) {}
