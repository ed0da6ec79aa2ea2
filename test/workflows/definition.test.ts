/** Workflow definitions as pure logic: structure checks, params against their types, templating, conditions. */
import { Either, Schema } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "vitest"
import YAML from "yaml"
import { holds, render, resolveParams, toolNameOf, WorkflowDefinition } from "../../src/workflows/Definition.ts"
import { projectWorkflowsDir } from "../../src/workflows/Engine.ts"

const decode = (value: unknown) => Schema.decodeUnknownEither(WorkflowDefinition, { errors: "all", onExcessProperty: "error" })(value)

const base = {
  id: "report",
  name: "Report",
  params: { topic: { type: "string", required: true }, depth: { type: "integer", default: 2 } },
  steps: [
    { id: "research", prompt: "Research {{topic}}" },
    { id: "write", prompt: "Write on {{topic}} from {{steps.research.result}}", when: { step: "research", status: "complete" } }
  ]
}

describe("workflow definitions", () => {
  it("fills in defaults and accepts a well-formed definition", () => {
    const definition = Either.getOrThrow(decode(base))
    expect(definition.bot).toBe("default")
    expect(definition.steps[0]).toMatchObject({ approval: false, retries: 0, timeout_seconds: 600, on_failure: "fail" })
    expect(definition.triggers).toEqual({ api: true })
    expect(toolNameOf(definition)).toBeNull()
    expect(toolNameOf(Either.getOrThrow(decode({ ...base, triggers: { tool: {} } })))).toBe("workflow_report")
  })

  it("refuses references to unknown params, later steps, duplicate steps and mistyped defaults", () => {
    const problems = (value: unknown) => {
      const result = decode(value)
      return Either.isLeft(result) ? String(result.left) : ""
    }
    expect(problems({ ...base, steps: [{ id: "a", prompt: "{{nope}}" }] })).toContain("{{nope}} names no param")
    expect(problems({ ...base, steps: [{ id: "a", prompt: "{{steps.b.result}}" }, { id: "b", prompt: "x" }] })).toContain(
      "names no earlier step"
    )
    expect(problems({ ...base, steps: [{ id: "a", prompt: "x" }, { id: "a", prompt: "y" }] })).toContain("used twice")
    expect(problems({ ...base, params: { n: { type: "integer", default: "two" } } })).toContain("the default is not a integer")
    expect(problems({ ...base, steps: [{ id: "a", prompt: "x", when: { step: "later", status: "complete" } }] })).toContain(
      "no earlier step later"
    )
    expect(problems({ ...base, steps: [] })).not.toBe("")
    expect(problems({ ...base, triggers: { schedule: { cron: "at dawn", params: { topic: "x" } } } })).toContain("triggers.schedule.cron")
    expect(problems({ ...base, triggers: { schedule: { cron: "0 9 * * *", timezone: "Mars/Olympus", params: { topic: "x" } } } }))
      .toContain("triggers.schedule.timezone")
    expect(problems({ ...base, triggers: { schedule: { cron: "0 9 * * *" } } })).toContain(
      "triggers.schedule.params.topic: The param topic is required"
    )
    expect(problems({ ...base, triggers: { schedule: { cron: "0 9 * * *", params: { topic: "tides" } } } })).toBe("")
  })

  it("checks params against their types, fills defaults, and names every problem", () => {
    const definition = Either.getOrThrow(decode(base))
    expect(Either.getOrThrow(resolveParams(definition, { topic: "tides" }))).toEqual({ topic: "tides", depth: 2 })
    const refused = resolveParams(definition, { depth: 2.5, colour: "red" })
    expect(Either.isLeft(refused) && refused.left.map((p) => [p.name, p.type])).toEqual([
      ["colour", "unknown_param"],
      ["topic", "missing"],
      ["depth", "type_error"]
    ])
  })

  it("renders params and earlier results, and evaluates conditions", () => {
    expect(render("On {{topic}}: {{ steps.research.result }}", { topic: "tides" }, { research: "high at noon" })).toBe(
      "On tides: high at noon"
    )
    const earlier = { research: { status: "complete" as const, result: "URGENT: storm" } }
    expect(holds(undefined, {}, {})).toBe(true)
    expect(holds({ param: "depth", equals: 2 }, { depth: 2 }, {})).toBe(true)
    expect(holds({ param: "depth", equals: 3 }, { depth: 2 }, {})).toBe(false)
    expect(holds({ step: "research", status: "complete" }, {}, earlier)).toBe(true)
    expect(holds({ step: "research", contains: "urgent" }, {}, earlier)).toBe(true)
    expect(holds({ step: "research", status: "failed" }, {}, earlier)).toBe(false)
  })

  it("ships examples that are valid workflows", () => {
    const files = fs.readdirSync(projectWorkflowsDir).filter((name) => name.endsWith(".yaml"))
    expect(files.length).toBeGreaterThanOrEqual(2)
    for (const file of files) {
      expect(Either.isRight(decode(YAML.parse(fs.readFileSync(path.join(projectWorkflowsDir, file), "utf8"))))).toBe(true)
    }
  })
})
