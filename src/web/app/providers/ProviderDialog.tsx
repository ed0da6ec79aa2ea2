/**
 * Adding or editing an OpenAI-compatible provider: its id, base URL, API key, extra headers and
 * the models configured on it with their prices. The stored key never comes to the page: the
 * server sends it masked, and an edit that leaves the key field empty sends the mask back, which
 * keeps the stored key.
 */
import { useState } from "react"
import type { ProviderView } from "../../../providers/Model.ts"
import type { AuthSession } from "../../shared/session.ts"
import { Dialog } from "../ui/Dialog.tsx"
import { Checkbox, TextArea, TextField } from "../ui/Field.tsx"
import { useAction } from "../ui/useLoad.ts"

interface ModelRow {
  readonly id: string
  readonly input: string
  readonly output: string
  readonly vision: boolean | null
}

const priceText = (price: number | null) => (price === null ? "" : String(price))
const priceOf = (text: string) => (text.trim() === "" ? null : Number(text))

/** `Name: value` lines, as the textarea shows extra headers. */
const headersText = (headers: Readonly<Record<string, string>>) =>
  Object.entries(headers).map(([name, value]) => `${name}: ${value}`).join("\n")
const headersOf = (text: string): Record<string, string> =>
  Object.fromEntries(
    text
      .split("\n")
      .map((line) => line.trim())
      .filter((line) => line.length > 0)
      .map((line) => {
        const colon = line.indexOf(":")
        return colon < 0 ? [line, ""] : [line.slice(0, colon).trim(), line.slice(colon + 1).trim()]
      })
  )

export const ProviderDialog = ({ auth, editing, open, onClose, onSaved }: {
  readonly auth: AuthSession
  /** The provider edited; undefined adds one. */
  readonly editing: ProviderView | undefined
  readonly open: boolean
  readonly onClose: () => void
  readonly onSaved: () => void
}) => {
  const [id, setId] = useState(editing?.id ?? "")
  const [baseUrl, setBaseUrl] = useState(editing?.base_url ?? "")
  const [apiKey, setApiKey] = useState("")
  const [removeKey, setRemoveKey] = useState(false)
  const [headers, setHeaders] = useState(headersText(editing?.extra_headers ?? {}))
  const [models, setModels] = useState<ReadonlyArray<ModelRow>>(
    (editing?.models ?? []).map((m) => ({
      id: m.id,
      input: priceText(m.input_price_per_million),
      output: priceText(m.output_price_per_million),
      vision: m.vision
    }))
  )
  const action = useAction()

  const setRow = (index: number, change: Partial<ModelRow>) =>
    setModels(models.map((row, i) => (i === index ? { ...row, ...change } : row)))
  const save = async () => {
    // Prices are typed as text (decimals of any precision); say which one is not a number here.
    const badPrice = models.find((row) => [row.input, row.output].some((text) => text.trim() !== "" && !(Number(text) >= 0)))
    if (badPrice) return action.setError(`The prices of ${badPrice.id || "a model"} must be numbers of 0 or more.`)
    const body = {
      type: "openai" as const,
      base_url: baseUrl.trim(),
      extra_headers: headersOf(headers),
      models: models
        .filter((row) => row.id.trim().length > 0)
        .map((row) => ({
          id: row.id.trim(),
          input_price_per_million: priceOf(row.input),
          output_price_per_million: priceOf(row.output),
          vision: row.vision
        }))
    }
    // The key: a new one typed; else null to remove it; else the mask the server sent, which keeps it.
    const key = apiKey.length > 0
      ? { api_key: apiKey }
      : removeKey
      ? { api_key: null }
      : editing?.api_key
      ? { api_key: editing.api_key }
      : {}
    const saved = await action.run(() =>
      auth.call((client) =>
        editing
          ? client.providers.update({ path: { id: editing.id }, payload: { ...body, ...key } })
          : client.providers.create({ payload: { id: id.trim(), ...body, ...key } })
      )
    )
    if (saved) {
      setApiKey("")
      onSaved()
      onClose()
    }
  }

  return (
    <Dialog
      title={editing ? `Edit provider ${editing.id}` : "Add provider"}
      open={open}
      onClose={onClose}
      onSubmit={() => void save()}
      submitLabel={editing ? "Save" : "Add provider"}
      busy={action.busy}
      error={action.error}
      wide
    >
      <div className="grid-2">
        {editing ?
          null :
          (
            <TextField
              label="Provider id"
              required
              value={id}
              onChange={setId}
              description="Lower-case letters, digits, - and _. Models are named id/model."
            />
          )}
        <TextField
          label="Base URL"
          type="url"
          required
          value={baseUrl}
          onChange={setBaseUrl}
          placeholder="https://api.example.com/v1"
          description="An OpenAI-compatible API."
        />
      </div>
      <TextField
        label="API key"
        type="password"
        value={apiKey}
        onChange={setApiKey}
        placeholder={editing?.api_key ? `Stored: ${editing.api_key}` : "none"}
        description={editing?.api_key
          ? "A key is stored (shown masked). Leave this empty to keep it."
          : "Stored encrypted; shown masked from then on."}
      />
      {editing?.api_key ? <Checkbox label="Remove the stored key" checked={removeKey} onChange={setRemoveKey} /> : null}
      <TextArea
        label="Extra headers"
        monospace
        rows={2}
        value={headers}
        onChange={setHeaders}
        description="One per line, as Name: value. Credential headers come back masked; leaving them so keeps them."
      />
      <fieldset className="stack">
        <legend>Models and prices (USD per million tokens)</legend>
        {models.length === 0 ? <p className="muted">No models configured here; the provider's own list still applies.</p> : null}
        {models.map((row, index) => (
          <div key={index} className="model-row" role="group" aria-label={`Model ${index + 1}`}>
            <TextField label="Model" value={row.id} onChange={(value) => setRow(index, { id: value })} />
            <TextField label="Input price" value={row.input} onChange={(value) => setRow(index, { input: value })} />
            <TextField label="Output price" value={row.output} onChange={(value) => setRow(index, { output: value })} />
            <button
              type="button"
              className="small"
              aria-label={`Remove model ${row.id || index + 1}`}
              onClick={() => setModels(models.filter((_, i) => i !== index))}
            >
              Remove
            </button>
          </div>
        ))}
        <div className="row">
          <button type="button" className="small" onClick={() => setModels([...models, { id: "", input: "", output: "", vision: null }])}>
            Add model
          </button>
        </div>
      </fieldset>
    </Dialog>
  )
}
