/** SQL for the stored LLM providers. */
import { SqlClient } from "@effect/sql"
import { Effect, Schema } from "effect"
import { decodeRows, repository } from "../db/Repository.ts"
import { resealPending } from "../db/Reseal.ts"
import { ProviderType } from "./Model.ts"

/** jsonb comes back parsed from PostgreSQL and as text from some paths; accept both. */
const Json = <A, I>(schema: Schema.Schema<A, I>) => Schema.Union(schema, Schema.parseJson(schema))

const ModelPrice = Schema.Struct({
  id: Schema.String,
  input_price_per_million: Schema.NullOr(Schema.Number),
  output_price_per_million: Schema.NullOr(Schema.Number),
  /** Absent in rows stored before cache prices could be set. */
  cache_read_price_per_million: Schema.optionalWith(Schema.NullOr(Schema.Number), { default: () => null }),
  cache_write_price_per_million: Schema.optionalWith(Schema.NullOr(Schema.Number), { default: () => null }),
  /** Absent in rows stored before models could say whether they take images. */
  vision: Schema.optionalWith(Schema.NullOr(Schema.Boolean), { default: () => null })
})

export const ProviderRow = Schema.Struct({
  id: Schema.String,
  type: ProviderType,
  base_url: Schema.String,
  api_key_encrypted: Schema.NullOr(Schema.String),
  extra_headers: Json(Schema.Record({ key: Schema.String, value: Schema.String })),
  models: Json(Schema.Array(ModelPrice))
})
export type ProviderRow = typeof ProviderRow.Type

const BaseUrlRow = ProviderRow.pipe(Schema.pick("id", "base_url"))

export class ProvidersRepo extends Effect.Service<ProvidersRepo>()("cairn/ProvidersRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return repository("ProvidersRepo", {
      /** Seals, once (db/Reseal.ts), the base URL credentials an older release stored in the clear. */
      resealBaseUrls: (seal: (url: string) => string) =>
        resealPending("llm_providers.base_url", {
          read: sql`SELECT id, base_url FROM llm_providers`.pipe(
            decodeRows(BaseUrlRow),
            // A row that does not decode is a defect, as in every repository; a database failure stays the caller's.
            Effect.catchTag("ParseError", Effect.die),
            Effect.map((rows) => rows.map((row) => [row.id, row.base_url] as const))
          ),
          seal,
          write: (id, url) => sql`UPDATE llm_providers SET base_url = ${url} WHERE id = ${id}`
        }),
      all: sql`SELECT id, type, base_url, api_key_encrypted, extra_headers, models FROM llm_providers ORDER BY id`.pipe(
        decodeRows(ProviderRow)
      ),
      /** false when the id is taken. */
      insert: (row: ProviderRow) =>
        sql`INSERT INTO llm_providers (id, type, base_url, api_key_encrypted, extra_headers, models)
            VALUES (${row.id}, ${row.type}, ${row.base_url}, ${row.api_key_encrypted},
                    ${JSON.stringify(row.extra_headers)}::jsonb, ${JSON.stringify(row.models)}::jsonb)
            ON CONFLICT (id) DO NOTHING RETURNING id`.pipe(Effect.map((rows) => rows.length > 0)),
      /** false when there is no such provider. */
      update: (row: ProviderRow) =>
        sql`UPDATE llm_providers SET type = ${row.type}, base_url = ${row.base_url},
              api_key_encrypted = ${row.api_key_encrypted}, extra_headers = ${JSON.stringify(row.extra_headers)}::jsonb,
              models = ${JSON.stringify(row.models)}::jsonb, updated_at = now()
            WHERE id = ${row.id} RETURNING id`.pipe(Effect.map((rows) => rows.length > 0)),
      remove: (id: string) => sql`DELETE FROM llm_providers WHERE id = ${id} RETURNING id`.pipe(Effect.map((rows) => rows.length > 0))
    })
  })
}) {}
