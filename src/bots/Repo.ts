/**
 * SQL for bots. The configuration is one jsonb document, validated by the service. Rows are decoded
 * with `BotRow`; a database failure is a defect here (no endpoint's contract names it: `repository`).
 */
import { SqlClient, SqlSchema } from "@effect/sql"
import { Effect, Schema } from "effect"
import { IdRow, repository } from "../db/Repository.ts"
import type { BotConfig } from "./Model.ts"

export class BotRow extends Schema.Class<BotRow>("BotRow")({
  id: Schema.String,
  config: Schema.Unknown,
  source: Schema.Literal("file", "api"),
  created_at: Schema.DateFromSelf,
  updated_at: Schema.DateFromSelf
}) {}

export class BotsRepo extends Effect.Service<BotsRepo>()("cairn/BotsRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const configJson = (config: BotConfig) => {
      const { id: _id, ...rest } = config
      return JSON.stringify(rest)
    }
    const listRows = SqlSchema.findAll({
      Request: Schema.Void,
      Result: BotRow,
      execute: () => sql`SELECT id, config, source, created_at, updated_at FROM bots ORDER BY id`
    })
    const findRow = SqlSchema.findOne({
      Request: Schema.String,
      Result: BotRow,
      execute: (id) => sql`SELECT id, config, source, created_at, updated_at FROM bots WHERE id = ${id}`
    })
    const insertRow = SqlSchema.findOne({
      Request: Schema.Struct({ config: Schema.Unknown, source: Schema.Literal("file", "api") }),
      Result: IdRow,
      execute: ({ config, source }) => {
        const bot = config as BotConfig
        return sql`INSERT INTO bots (id, config, source) VALUES (${bot.id}, ${configJson(bot)}::jsonb, ${source})
            ON CONFLICT (id) DO NOTHING RETURNING id`
      }
    })
    const updateRow = SqlSchema.findOne({
      Request: Schema.Unknown,
      Result: IdRow,
      execute: (config) => {
        const bot = config as BotConfig
        return sql`UPDATE bots SET config = ${configJson(bot)}::jsonb, source = 'api', updated_at = now()
            WHERE id = ${bot.id} RETURNING id`
      }
    })
    const removeRow = SqlSchema.findOne({
      Request: Schema.String,
      Result: IdRow,
      execute: (id) => sql`DELETE FROM bots WHERE id = ${id} RETURNING id`
    })
    return repository("BotsRepo", {
      list: listRows(undefined),
      find: (id: string) => findRow(id),
      /** Inserts; answers false when the id is taken. */
      insert: (config: BotConfig, source: "file" | "api") => Effect.map(insertRow({ config, source }), (row) => row._tag === "Some"),
      /** A file's bot replaces the stored one unless the API has taken it over. */
      syncFromFile: (config: BotConfig) =>
        sql`INSERT INTO bots (id, config, source) VALUES (${config.id}, ${configJson(config)}::jsonb, 'file')
            ON CONFLICT (id) DO UPDATE SET config = EXCLUDED.config, updated_at = now()
            WHERE bots.source = 'file' AND bots.config <> EXCLUDED.config`.pipe(Effect.asVoid),
      update: (config: BotConfig) => Effect.map(updateRow(config), (row) => row._tag === "Some"),
      remove: (id: string) => Effect.map(removeRow(id), (row) => row._tag === "Some")
    })
  })
}) {}
