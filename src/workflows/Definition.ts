/**
 * A workflow as its author writes it (YAML or JSON), checked whole: typed params, steps (a prompt
 * with `{{param}}` and `{{steps.<id>.result}}`, a bot, tools, a condition on params or earlier
 * steps, an approval gate, a timeout, retries), triggers. Pure: parsing, param checking, templating
 * and conditions have no effects.
 */
import { Either, ParseResult, Schema } from "effect"
import { cronProblem, validTimezone } from "../heartbeats/Slots.ts"

const Id = Schema.String.pipe(
  Schema.pattern(/^[a-z0-9][a-z0-9_-]{0,63}$/, { message: () => "Expected an id of lowercase letters, digits, - and _ (at most 64)" })
)

export const ParamSpec = Schema.Struct({
  type: Schema.Literal("string", "integer", "number", "boolean"),
  required: Schema.optionalWith(Schema.Boolean, { default: () => false }),
  default: Schema.optional(Schema.Union(Schema.String, Schema.Number, Schema.Boolean)),
  description: Schema.optionalWith(Schema.String, { default: () => "" })
})
export type ParamSpec = typeof ParamSpec.Type

/** When a step runs: a param's value, or an earlier step's status or result. */
export const Condition = Schema.Union(
  Schema.Struct({ param: Schema.String, equals: Schema.Union(Schema.String, Schema.Number, Schema.Boolean) }),
  Schema.Struct({ step: Schema.String, status: Schema.Literal("complete", "skipped", "failed") }),
  Schema.Struct({ step: Schema.String, contains: Schema.String })
)
export type Condition = typeof Condition.Type

export const StepSpec = Schema.Struct({
  id: Id,
  prompt: Schema.String.pipe(Schema.minLength(1)),
  /** The bot that answers; default the workflow's `bot`. */
  bot: Schema.optional(Schema.String.pipe(Schema.minLength(1))),
  /** The tools the step's turn may use (names or @groups); default the bot's. */
  tools: Schema.optional(Schema.Array(Schema.String.pipe(Schema.minLength(1)))),
  when: Schema.optional(Condition),
  /** Waits for a person's approval (POST …/steps/{id}/approve) before it runs. */
  approval: Schema.optionalWith(Schema.Boolean, { default: () => false }),
  timeout_seconds: Schema.optionalWith(Schema.Int.pipe(Schema.between(1, 24 * 3600)), { default: () => 600 }),
  /** Further attempts after a failure (or a timeout). */
  retries: Schema.optionalWith(Schema.Int.pipe(Schema.between(0, 10)), { default: () => 0 }),
  /** After its last failed attempt: fail the run (default), or go on. */
  on_failure: Schema.optionalWith(Schema.Literal("fail", "continue"), { default: () => "fail" as const })
})
export type StepSpec = typeof StepSpec.Type

export const Triggers = Schema.Struct({
  /** POST /api/v1/admin/workflows/{id}/run. */
  api: Schema.optionalWith(Schema.Boolean, { default: () => true }),
  /** A run on each slot of a cron expression (5 fields, or 6 with seconds) in `timezone`, with `params`. */
  schedule: Schema.optional(
    Schema.Struct({
      cron: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(200)),
      timezone: Schema.optionalWith(Schema.String, { default: () => "UTC" }),
      params: Schema.optionalWith(
        Schema.Record({ key: Schema.String, value: Schema.Union(Schema.String, Schema.Number, Schema.Boolean) }),
        { default: () => ({}) }
      )
    })
  ),
  /** A tool bots may call to start the workflow with its params (`workflow_<id>` unless named). */
  tool: Schema.optional(Schema.Struct({ name: Schema.optional(Id), description: Schema.optional(Schema.String) }))
})

export const WorkflowDefinition = Schema.Struct({
  id: Id,
  name: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(200)),
  description: Schema.optionalWith(Schema.String, { default: () => "" }),
  bot: Schema.optionalWith(Schema.String.pipe(Schema.minLength(1)), { default: () => "default" }),
  params: Schema.optionalWith(Schema.Record({ key: Schema.String.pipe(Schema.pattern(/^[a-z_][a-z0-9_]*$/)), value: ParamSpec }), {
    default: () => ({})
  }),
  steps: Schema.NonEmptyArray(StepSpec),
  triggers: Schema.optionalWith(Triggers, { default: () => ({ api: true }) })
}).pipe(Schema.filter((definition) => structureProblems(definition)))
export type WorkflowDefinition = typeof WorkflowDefinition.Type

/** A `{{name}}` in a prompt: a param, or `steps.<id>.result`. */
const placeholder = /\{\{\s*([\w.-]+)\s*\}\}/g

const references = (template: string) => [...template.matchAll(placeholder)].map((match) => match[1]!)

/** What makes a well-typed workflow wrong: duplicate steps, references to unknown or later things. */
function structureProblems(definition: {
  readonly params: Readonly<Record<string, ParamSpec>>
  readonly steps: ReadonlyArray<StepSpec>
  readonly triggers: {
    readonly schedule?: { readonly cron: string; readonly timezone: string; readonly params: Readonly<Record<string, unknown>> } | undefined
  }
}): ReadonlyArray<ParseResult.ParseIssue> | true {
  const problems: Array<string> = []
  const schedule = definition.triggers.schedule
  if (schedule) {
    if (!validTimezone(schedule.timezone)) problems.push(`triggers.schedule.timezone: ${schedule.timezone} is not an IANA time zone`)
    else if (cronProblem(schedule.cron, schedule.timezone) !== null) {
      problems.push(`triggers.schedule.cron: ${cronProblem(schedule.cron, schedule.timezone)}`)
    }
    const params = resolveParams(definition, schedule.params)
    if (Either.isLeft(params)) {
      for (const problem of params.left) problems.push(`triggers.schedule.params.${problem.name}: ${problem.message}`)
    }
  }
  const seen = new Set<string>()
  for (const [index, step] of definition.steps.entries()) {
    if (seen.has(step.id)) problems.push(`steps[${index}]: the step id ${step.id} is used twice`)
    for (const name of references(step.prompt)) {
      const earlier = /^steps\.([\w-]+)\.result$/.exec(name)
      if (earlier ? !seen.has(earlier[1]!) : !(name in definition.params)) {
        problems.push(`steps[${index}] (${step.id}): {{${name}}} names ${earlier ? "no earlier step" : "no param"}`)
      }
    }
    if (step.when && "param" in step.when && !(step.when.param in definition.params)) {
      problems.push(`steps[${index}] (${step.id}): when names no param ${step.when.param}`)
    }
    if (step.when && "step" in step.when && !seen.has(step.when.step)) {
      problems.push(`steps[${index}] (${step.id}): when names no earlier step ${step.when.step}`)
    }
    seen.add(step.id)
  }
  for (const [name, spec] of Object.entries(definition.params)) {
    if (spec.default !== undefined && !fitsType(spec.type, spec.default)) problems.push(`params.${name}: the default is not a ${spec.type}`)
  }
  return problems.length === 0 ? true : problems.map((message) => new ParseResult.Type(Schema.String.ast, definition, message))
}

const fitsType = (type: ParamSpec["type"], value: unknown) =>
  type === "string"
    ? typeof value === "string"
    : type === "boolean"
    ? typeof value === "boolean"
    : type === "integer"
    ? Number.isInteger(value)
    : typeof value === "number" && Number.isFinite(value)

export type ParamValue = string | number | boolean

/** The params of a run: given ones checked against their types, defaults filled in; or each problem. */
export const resolveParams = (
  definition: Pick<WorkflowDefinition, "params">,
  given: Readonly<Record<string, unknown>>
): Either.Either<Record<string, ParamValue>, ReadonlyArray<{ readonly name: string; readonly message: string; readonly type: string }>> => {
  const problems: Array<{ name: string; message: string; type: string }> = []
  const resolved: Record<string, ParamValue> = {}
  for (const name of Object.keys(given)) {
    if (!(name in definition.params)) problems.push({ name, message: `Unknown param ${name}`, type: "unknown_param" })
  }
  for (const [name, spec] of Object.entries(definition.params)) {
    const value = given[name]
    if (value === undefined || value === null) {
      if (spec.default !== undefined) resolved[name] = spec.default
      else if (spec.required) problems.push({ name, message: `The param ${name} is required`, type: "missing" })
      continue
    }
    if (!fitsType(spec.type, value)) {
      problems.push({ name, message: `Expected ${spec.type === "integer" ? "an integer" : `a ${spec.type}`}`, type: "type_error" })
    } else resolved[name] = value as ParamValue
  }
  return problems.length > 0 ? Either.left(problems) : Either.right(resolved)
}

/** A prompt with its `{{param}}` and `{{steps.<id>.result}}` filled in (an unset optional param is empty). */
export const render = (template: string, params: Readonly<Record<string, ParamValue>>, results: Readonly<Record<string, string | null>>) =>
  template.replace(placeholder, (_, name: string) => {
    const earlier = /^steps\.([\w-]+)\.result$/.exec(name)
    return earlier ? (results[earlier[1]!] ?? "") : String(params[name] ?? "")
  })

export type StepStatus = "pending" | "waiting_approval" | "running" | "complete" | "failed" | "skipped" | "cancelled"

/** Whether a step's condition holds, given the params and the earlier steps' statuses and results. */
export const holds = (
  condition: Condition | undefined,
  params: Readonly<Record<string, ParamValue>>,
  earlier: Readonly<Record<string, { readonly status: StepStatus; readonly result: string | null }>>
): boolean => {
  if (!condition) return true
  if ("param" in condition) return params[condition.param] === condition.equals
  const step = earlier[condition.step]
  if ("status" in condition) return step?.status === condition.status
  return (step?.result ?? "").toLowerCase().includes(condition.contains.toLowerCase())
}

/** The tool name a workflow's tool trigger registers. */
export const toolNameOf = (definition: WorkflowDefinition) =>
  definition.triggers.tool ? (definition.triggers.tool.name ?? `workflow_${definition.id.replace(/-/g, "_")}`) : null
