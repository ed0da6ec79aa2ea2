/**
 * Adding or editing a provider. Adding starts from a preset (`providerPresets`: OpenAI, Anthropic,
 * Ollama, …), which fills the id, the API type and the base URL and says whether a key is needed;
 * "Custom" leaves them to the user, with the type picked from the three. Then the API key, extra
 * headers and the models configured on it with their prices. The stored key never comes to the
 * page: the server sends it masked, and an edit that leaves the key field empty sends the mask
 * back, which keeps the stored key.
 */
import { useEffect, useRef, useState } from "react"
import type { ProviderType, ProviderView } from "../../../providers/Model.ts"
import { presetById } from "../../../providers/Presets.ts"
import type { AuthSession } from "../../shared/session.ts"
import { Dialog } from "../ui/Dialog.tsx"
import { Checkbox, TextArea } from "../ui/Field.tsx"
import { useAction } from "../ui/useLoad.ts"
import { badPriceRow, type ModelRow, ModelRows, modelsOf, rowsOf } from "./ModelRows.tsx"
import { PresetPicker } from "./PresetPicker.tsx"
import { ConnectionFields, KeyField } from "./ProviderFields.tsx"

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

/** The key as sent: a new one typed; else null to remove it; else the mask the server sent, which keeps it. */
const keyPart = (typed: string, remove: boolean, editing: ProviderView | undefined) =>
  typed.length > 0 ? { api_key: typed } : remove ? { api_key: null } : editing?.api_key ? { api_key: editing.api_key } : {}

/**
 * Moves focus into the step just shown: the chosen preset when going back to the picker, the first
 * field when going on (the dialog itself focuses the first control when it opens).
 */
const useStepFocus = (step: "pick" | "details") => {
  const body = useRef<HTMLDivElement>(null)
  const shown = useRef(step)
  useEffect(() => {
    if (shown.current === step) return
    shown.current = step
    const target = body.current?.querySelector<HTMLElement>(step === "pick" ? "input:checked" : "input, select, textarea")
    target?.focus()
  }, [step])
  return body
}

export const ProviderDialog = ({ auth, editing, open, onClose, onSaved }: {
  readonly auth: AuthSession
  /** The provider edited; undefined adds one. */
  readonly editing: ProviderView | undefined
  readonly open: boolean
  readonly onClose: () => void
  /** The provider as saved. */
  readonly onSaved: (saved: ProviderView) => void
}) => {
  const [step, setStep] = useState<"pick" | "details">(editing ? "details" : "pick")
  /** The preset chosen (its id, or CUSTOM); "" before any. */
  const [picked, setPicked] = useState("")
  const [id, setId] = useState(editing?.id ?? "")
  const [type, setType] = useState<ProviderType>(editing?.type ?? "openai")
  const [baseUrl, setBaseUrl] = useState(editing?.base_url ?? "")
  const [apiKey, setApiKey] = useState("")
  const [removeKey, setRemoveKey] = useState(false)
  const [headers, setHeaders] = useState(headersText(editing?.extra_headers ?? {}))
  const [models, setModels] = useState<ReadonlyArray<ModelRow>>(rowsOf(editing?.models ?? []))
  const action = useAction()
  const body = useStepFocus(step)
  const preset = presetById(picked)

  const goOn = () => {
    setId(preset?.id ?? "")
    setType(preset?.type ?? "openai")
    setBaseUrl(preset?.baseUrl ?? "")
    action.setError(undefined)
    setStep("details")
  }
  const save = async () => {
    const badPrice = badPriceRow(models)
    if (badPrice) return action.setError(`The prices of ${badPrice.id || "a model"} must be numbers of 0 or more.`)
    const fields = { type, base_url: baseUrl.trim(), extra_headers: headersOf(headers), models: modelsOf(models) }
    const payload = { ...fields, ...keyPart(apiKey, removeKey, editing) }
    const saved = await action.run(() =>
      auth.call((client) =>
        editing
          ? client.providers.update({ path: { id: editing.id }, payload })
          : client.providers.create({ payload: { id: id.trim(), ...payload } })
      )
    )
    if (saved) {
      setApiKey("")
      onSaved(saved)
      onClose()
    }
  }

  const picking = step === "pick"
  return (
    <Dialog
      title={editing ? `Edit provider ${editing.id}` : "Add provider"}
      open={open}
      onClose={onClose}
      onSubmit={() => void (picking ? goOn() : save())}
      submitLabel={picking ? "Continue" : editing ? "Save" : "Add provider"}
      busy={action.busy}
      error={action.error}
      wide
    >
      <div ref={body} className="stack">
        {picking ? <PresetPicker picked={picked} onPick={setPicked} /> : (
          <>
            <ConnectionFields
              preset={preset}
              editing={editing !== undefined}
              id={id}
              onId={setId}
              type={type}
              onType={setType}
              baseUrl={baseUrl}
              onBaseUrl={setBaseUrl}
              onBack={editing ? undefined : () => setStep("pick")}
            />
            <KeyField
              preset={preset}
              editing={editing !== undefined}
              stored={editing?.api_key ?? null}
              value={apiKey}
              onChange={setApiKey}
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
            <ModelRows rows={models} onChange={setModels} example={preset?.exampleModel} />
          </>
        )}
      </div>
    </Dialog>
  )
}
