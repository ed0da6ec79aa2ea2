/**
 * A workflow's tool trigger: the tool it gives bots, whose params are the workflow's and whose
 * answer names the run it started. Registered when the workflow is made or changed and for every
 * stored workflow at start; taken back only when the tool is that workflow's.
 */
import { Effect, Either, Schema } from "effect"
import { type HandlerError, jsonSchemaTool } from "../agent/Tool.ts"
import { ToolRegistry } from "../agent/Tools.ts"
import { toolNameOf, WorkflowDefinition } from "./Definition.ts"
import type { WorkflowRun } from "./Model.ts"
import { WorkflowsRepo } from "./Repo.ts"

const decodeDefinition = Schema.decodeUnknownSync(WorkflowDefinition)

/** The tool triggers of workflows; `start` starts a run for a tool call (`Workflows.start` through "tool"). */
export const toolTriggers = <E extends HandlerError>(
  start: (workflowId: string, args: Readonly<Record<string, unknown>>, triggeredBy: string) => Effect.Effect<WorkflowRun, E>
) =>
  Effect.gen(function*() {
    const repo = yield* WorkflowsRepo
    const tools = yield* ToolRegistry

    /** Takes back a workflow's tool, only when it is that workflow's (never a tool of another source). */
    const unregisterTool = (definition: WorkflowDefinition) => {
      const name = toolNameOf(definition)
      return name && tools.get(name)?.source === `workflow:${definition.id}` ? tools.unregister(name) : Effect.void
    }

    /** The tool a workflow's tool trigger gives bots: its params are the tool's, the answer names the run. */
    const registerTool = (definition: WorkflowDefinition) => {
      const name = toolNameOf(definition)
      if (!name) return Effect.void
      const taken = tools.get(name)
      if (taken && taken.source !== `workflow:${definition.id}`) {
        return Effect.logWarning(`The tool of workflow ${definition.id} is not registered: ${name} is ${taken.source}'s`)
      }
      const properties = Object.fromEntries(
        Object.entries(definition.params).map((
          [param, spec]
        ) => [param, { type: spec.type, ...(spec.description ? { description: spec.description } : {}) }])
      )
      const required = Object.entries(definition.params).flatMap((
        [param, spec]
      ) => (spec.required && spec.default === undefined ? [param] : []))
      const description = definition.triggers.tool?.description ??
        `Start the workflow "${definition.name}": ${definition.description}`.trim()
      // Starting a run changes what the server keeps; its steps are checked as they run.
      return tools.register(
        jsonSchemaTool({
          name,
          description,
          parameters: { type: "object", properties, required },
          effect: "write",
          source: `workflow:${definition.id}`,
          handler: (args, context) =>
            Effect.map(
              start(definition.id, args, `tool:${context.botId}`),
              (run) => ({ workflow_run_id: run.id, status: run.status })
            )
        })
      )
    }

    /** Registers the tools of every stored workflow that has a tool trigger (at start). */
    const registerTools = Effect.gen(function*() {
      for (const row of yield* repo.list) {
        const definition = yield* Effect.either(Effect.try(() => decodeDefinition(row.definition)))
        if (Either.isRight(definition)) yield* registerTool(definition.right)
      }
    })

    return { registerTool, unregisterTool, registerTools } as const
  })
