/** SQL for the stored LLM providers. */
import { repository } from "../db/Repository.ts"
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export interface ProviderRow {
  readonly id: string
  readonly type: "openai"
  readonly base_url: string
  readonly api_key_encrypted: string | null
  readonly extra_headers: Record<string, string>
  readonly models: ReadonlyArray<{
    readonly id: string
    readonly input_price_per_million: number | null
    readonly output_price_per_million: number | null
  }>
}

/** jsonb comes back parsed from PostgreSQL and as text from some paths; accept both. */
const parsed = <A>(value: unknown): A => (typeof value === "string" ? JSON.parse(value) : value) as A

const decodeRow = (row: any): ProviderRow => ({
  id: row.id,
  type: row.type,
  base_url: row.base_url,
  api_key_encrypted: row.api_key_encrypted,
  extra_headers: parsed(row.extra_headers),
  models: parsed(row.models)
})

export class ProvidersRepo extends Effect.Service<ProvidersRepo>()("cairn/ProvidersRepo", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    return repository("ProvidersRepo", {
      all: sql`SELECT id, type, base_url, api_key_encrypted, extra_headers, models FROM llm_providers ORDER BY id`.pipe(
        Effect.map((rows) => rows.map(decodeRow))
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
      remove: (id: string) =>
        sql`DELETE FROM llm_providers WHERE id = ${id} RETURNING id`.pipe(Effect.map((rows) => rows.length > 0))
    })
  })
}) {}
