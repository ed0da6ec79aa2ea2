/**
 * Workflows: every workflow (from files and the API), one's definition (params, steps, triggers),
 * a run started with its params typed as declared, and the runs with their steps.
 */
import { useState } from "react"
import type { ParamSpec, WorkflowDefinition } from "../../../workflows/Definition.ts"
import type { Workflow } from "../../../workflows/Model.ts"
import type { PageProps } from "../pages.ts"
import { navigate } from "../route.ts"
import { allows } from "../scopes.ts"
import { Dialog } from "../ui/Dialog.tsx"
import { Checkbox, TextField } from "../ui/Field.tsx"
import { JsonView } from "../ui/Json.tsx"
import { Page, Section, When } from "../ui/Page.tsx"
import { scrollRegion } from "../ui/scrollRegion.ts"
import { useAction, useLoad } from "../ui/useLoad.ts"
import { Runs } from "./Runs.tsx"

/** The definition as the server sends it (defaults filled in); read only for display. */
const definitionOf = (workflow: Workflow) => workflow.definition as WorkflowDefinition

const initialParams = (params: Readonly<Record<string, ParamSpec>>) =>
  Object.fromEntries(Object.entries(params).map(([name, spec]) => [name, spec.default === undefined ? "" : String(spec.default)]))

/** A typed param from its field's text: numbers and booleans as such; an empty optional one left out. */
const typedParams = (specs: Readonly<Record<string, ParamSpec>>, values: Readonly<Record<string, string>>) => {
  const params: Record<string, unknown> = {}
  for (const [name, spec] of Object.entries(specs)) {
    const text = values[name] ?? ""
    if (spec.type === "boolean") params[name] = text === "true"
    else if (text === "") continue
    else params[name] = spec.type === "string" ? text : Number(text)
  }
  return params
}

const RunDialog = (
  { auth, workflow, onClose, onStarted }: Pick<PageProps, "auth"> & {
    readonly workflow: Workflow
    readonly onClose: () => void
    readonly onStarted: () => void
  }
) => {
  const specs = definitionOf(workflow).params ?? {}
  const [values, setValues] = useState(() => initialParams(specs))
  const action = useAction()
  const start = async () => {
    const run = await action.run(() =>
      auth.call((client) => client.workflows.run({ path: { id: workflow.id }, payload: { params: typedParams(specs, values) } }))
    )
    if (run) onStarted()
  }
  return (
    <Dialog
      title={`Run ${definitionOf(workflow).name}`}
      open
      onClose={onClose}
      onSubmit={() => void start()}
      submitLabel="Start run"
      busy={action.busy}
      error={action.error}
    >
      {Object.keys(specs).length === 0 ? <p className="muted">This workflow takes no params.</p> : null}
      {Object.entries(specs).map(([name, spec]) =>
        spec.type === "boolean" ?
          (
            <Checkbox
              key={name}
              label={name}
              description={spec.description || undefined}
              checked={values[name] === "true"}
              onChange={(checked) => setValues({ ...values, [name]: String(checked) })}
            />
          ) :
          (
            <TextField
              key={name}
              label={name}
              required={spec.required}
              type={spec.type === "string" ? "text" : "number"}
              description={`${spec.type}${spec.description ? ` — ${spec.description}` : ""}`}
              value={values[name] ?? ""}
              onChange={(value) => setValues({ ...values, [name]: value })}
            />
          )
      )}
    </Dialog>
  )
}

const WorkflowDetail = (
  { auth, workflow, onRun }: Pick<PageProps, "auth"> & { readonly workflow: Workflow; readonly onRun: () => void }
) => {
  const definition = definitionOf(workflow)
  return (
    <Section
      title={definition.name}
      actions={allows(auth, ["workflows", "run"]) ? <button type="button" className="primary" onClick={onRun}>Run</button> : null}
    >
      {definition.description ? <p>{definition.description}</p> : null}
      <p className="muted">
        Id <code>{workflow.id}</code> · bot {definition.bot} · from {workflow.source} · updated <When at={workflow.updated_at} />
      </p>
      <ol className="steps" aria-label="Steps">
        {definition.steps.map((step) => (
          <li key={step.id}>
            <strong className="mono">{step.id}</strong>
            {step.approval ? <span className="chip">approval</span> : null}
            {step.when ? <span className="chip">conditional</span> : null}
            <p className="plain muted">{step.prompt}</p>
          </li>
        ))}
      </ol>
      <details>
        <summary>Definition</summary>
        <JsonView value={workflow.definition} label="Definition" />
      </details>
    </Section>
  )
}

export default function WorkflowsPage({ auth, rest }: PageProps) {
  const workflows = useLoad(() => auth.call((client) => client.workflows.list()), [auth])
  const [running, setRunning] = useState(false)
  const [started, setStarted] = useState(0)
  const selectedId = rest[0]
  const selected = workflows.data?.find((workflow) => workflow.id === selectedId)
  return (
    <Page title="Workflows" error={workflows.error} loading={workflows.loading && !workflows.data}>
      <div {...scrollRegion}>
        <table className="data" aria-label="Workflows">
          <thead>
            <tr>
              <th>Name</th>
              <th>Id</th>
              <th className="num">Steps</th>
              <th>Source</th>
              <th>Updated</th>
            </tr>
          </thead>
          <tbody>
            {(workflows.data ?? []).map((workflow) => (
              <tr key={workflow.id} aria-selected={workflow.id === selectedId}>
                <td>
                  <a
                    href={`/admin/workflows/${encodeURIComponent(workflow.id)}`}
                    onClick={(event) => {
                      event.preventDefault()
                      navigate(`/admin/workflows/${encodeURIComponent(workflow.id)}`)
                    }}
                  >
                    {definitionOf(workflow).name}
                  </a>
                </td>
                <td className="mono">{workflow.id}</td>
                <td className="num">{definitionOf(workflow).steps.length}</td>
                <td>{workflow.source}</td>
                <td>
                  <When at={workflow.updated_at} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
        {workflows.data && workflows.data.length === 0
          ? <p className="muted">No workflows yet: add a YAML file to workflows/ or POST one to the API.</p>
          : null}
      </div>
      {selectedId && workflows.data && !selected ? <p role="alert" className="error">No workflow {selectedId}.</p> : null}
      {selected ? <WorkflowDetail auth={auth} workflow={selected} onRun={() => setRunning(true)} /> : null}
      {selected && running
        ? (
          <RunDialog
            auth={auth}
            workflow={selected}
            onClose={() => setRunning(false)}
            onStarted={() => {
              setRunning(false)
              setStarted(started + 1)
            }}
          />
        )
        : null}
      <Runs auth={auth} workflowId={selected?.id} refreshKey={started} />
    </Page>
  )
}
