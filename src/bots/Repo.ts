/** SQL for bots. The configuration is one jsonb document, validated by the service. */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { BotConfig } from "./Model.ts"

export interface BotRow {
  readonly id: string
  readonly config: unknown
  readonly source: "file" | "api"
  readonly created_at: Date
  readonly updated_at: Date
}

export class BotsRepo extends Effect.Service<BotsRepo>()("cairn/BotsRepo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const configJson = (config: BotConfig) => {
      const { id: _id, ...rest } = config
      return JSON.stringify(rest)
    }
    return {
      list: sql<BotRow>`SELECT id, config, source, created_at, updated_at FROM bots ORDER BY id`,
      find: (id: string) =>
        Effect.map(
          sql<BotRow>`SELECT id, config, source, created_at, updated_at FROM bots WHERE id = ${id}`,
          (rows) => rows[0]
        ),
      /** Inserts; answers false when the id is taken. */
      insert: (config: BotConfig, source: "file" | "api") =>
        Effect.map(
          sql<{ id: string }>`INSERT INTO bots (id, config, source) VALUES (${config.id}, ${configJson(config)}::jsonb, ${source})
              ON CONFLICT (id) DO NOTHING RETURNING id`,
          (rows) => rows.length === 1
        ),
      /** A file's bot replaces the stored one unless the API has taken it over. */
      syncFromFile: (config: BotConfig) =>
        sql`INSERT INTO bots (id, config, source) VALUES (${config.id}, ${configJson(config)}::jsonb, 'file')
            ON CONFLICT (id) DO UPDATE SET config = EXCLUDED.config, updated_at = now()
            WHERE bots.source = 'file' AND bots.config <> EXCLUDED.config`.pipe(Effect.asVoid),
      update: (config: BotConfig) =>
        Effect.map(
          sql<{ id: string }>`UPDATE bots SET config = ${configJson(config)}::jsonb, source = 'api', updated_at = now()
              WHERE id = ${config.id} RETURNING id`,
          (rows) => rows.length === 1
        ),
      remove: (id: string) =>
        Effect.map(sql<{ id: string }>`DELETE FROM bots WHERE id = ${id} RETURNING id`, (rows) => rows.length === 1)
    }
  })
}) {}
