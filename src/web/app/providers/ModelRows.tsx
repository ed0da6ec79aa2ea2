/**
 * The models configured on a provider, as the provider dialog edits them: the id and the input and
 * output prices typed as text; the cache prices and the vision flag the page does not edit are
 * carried through unchanged, so a save never drops what the API set.
 */
import type { ProviderModel } from "../../../providers/Model.ts"
import { TextField } from "../ui/Field.tsx"

export interface ModelRow {
  readonly id: string
  readonly input: string
  readonly output: string
  /** What the page does not edit, as the server sent it. */
  readonly kept: Pick<ProviderModel, "cache_read_price_per_million" | "cache_write_price_per_million" | "vision">
}

const priceText = (price: number | null) => (price === null ? "" : String(price))
const priceOf = (text: string) => (text.trim() === "" ? null : Number(text))

const nothingKept: ModelRow["kept"] = { cache_read_price_per_million: null, cache_write_price_per_million: null, vision: null }

export const rowsOf = (models: ReadonlyArray<ProviderModel>): ReadonlyArray<ModelRow> =>
  models.map((model) => ({
    id: model.id,
    input: priceText(model.input_price_per_million),
    output: priceText(model.output_price_per_million),
    kept: {
      cache_read_price_per_million: model.cache_read_price_per_million,
      cache_write_price_per_million: model.cache_write_price_per_million,
      vision: model.vision
    }
  }))

/** The row whose price is not a number of 0 or more, if any (prices are typed as text, decimals of any precision). */
export const badPriceRow = (rows: ReadonlyArray<ModelRow>) =>
  rows.find((row) => [row.input, row.output].some((text) => text.trim() !== "" && !(Number(text) >= 0)))

/** The rows as the API takes them; a row without a model id is left out. */
export const modelsOf = (rows: ReadonlyArray<ModelRow>) =>
  rows
    .filter((row) => row.id.trim().length > 0)
    .map((row) => ({
      id: row.id.trim(),
      input_price_per_million: priceOf(row.input),
      output_price_per_million: priceOf(row.output),
      ...row.kept
    }))

export const ModelRows = ({ rows, onChange, example }: {
  readonly rows: ReadonlyArray<ModelRow>
  readonly onChange: (rows: ReadonlyArray<ModelRow>) => void
  /** A model to suggest (the preset's example). */
  readonly example?: string | undefined
}) => {
  const setRow = (index: number, change: Partial<ModelRow>) => onChange(rows.map((row, i) => (i === index ? { ...row, ...change } : row)))
  return (
    <fieldset className="stack">
      <legend>Models and prices (USD per million tokens)</legend>
      {rows.length === 0 ?
        (
          <p className="muted">
            No models configured here; the provider's own list still applies. After saving, <strong>Models</strong>{" "}
            lists what the provider offers, to add in one click.
          </p>
        ) :
        null}
      {rows.map((row, index) => (
        <div key={index} className="model-row" role="group" aria-label={`Model ${index + 1}`}>
          <TextField
            label="Model"
            value={row.id}
            placeholder={example ? `e.g. ${example}` : undefined}
            onChange={(value) => setRow(index, { id: value })}
          />
          <TextField label="Input price" value={row.input} onChange={(value) => setRow(index, { input: value })} />
          <TextField label="Output price" value={row.output} onChange={(value) => setRow(index, { output: value })} />
          <button
            type="button"
            className="small"
            aria-label={`Remove model ${row.id || index + 1}`}
            onClick={() => onChange(rows.filter((_, i) => i !== index))}
          >
            Remove
          </button>
        </div>
      ))}
      <div className="row">
        <button type="button" className="small" onClick={() => onChange([...rows, { id: "", input: "", output: "", kept: nothingKept }])}>
          Add model
        </button>
      </div>
    </fieldset>
  )
}
