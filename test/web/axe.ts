/**
 * axe-core in the web app's browser tests: its source is evaluated in the page (through the
 * DevTools protocol, so the app's Content-Security-Policy does not stop it) and the page is checked
 * against WCAG 2.x A/AA. Only serious and critical violations fail a test.
 */
import { createRequire } from "node:module"
import type { Page } from "playwright-core"
import { expect } from "vitest"

const axeSource: string = (createRequire(import.meta.url)("axe-core") as { source: string }).source

export interface AxeViolation {
  readonly id: string
  readonly impact: string
  readonly help: string
  readonly targets: ReadonlyArray<string>
}

interface AxeResult {
  readonly violations: ReadonlyArray<{
    readonly id: string
    readonly impact?: string | null
    readonly help: string
    readonly nodes: ReadonlyArray<{ readonly target: ReadonlyArray<unknown>; readonly failureSummary?: string }>
  }>
}

/** The serious and critical violations on the page as it is now (optionally only inside `include`, a CSS selector). */
export const seriousViolations = async (page: Page, include?: string): Promise<ReadonlyArray<AxeViolation>> => {
  // Strings, evaluated in the page: the tests compile without the DOM library.
  const loaded = await page.evaluate<boolean>(`typeof window.axe === "object"`)
  if (!loaded) await page.evaluate(axeSource)
  const options = {
    runOnly: { type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "best-practice"] },
    resultTypes: ["violations"]
  }
  const result = await page.evaluate<AxeResult>(
    `window.axe.run(${include === undefined ? "document" : JSON.stringify(include)}, ${JSON.stringify(options)})`
  )
  return result.violations
    .filter((violation) => violation.impact === "serious" || violation.impact === "critical")
    .map((violation) => ({
      id: violation.id,
      impact: violation.impact ?? "",
      help: violation.help,
      targets: violation.nodes.map((node) =>
        `${node.target.map(String).join(" ")}${node.failureSummary ? ` (${node.failureSummary.replace(/\s+/g, " ").trim()})` : ""}`
      )
    }))
}

/** A readable list of violations, one rule a paragraph, one element a line. */
export const formatViolations = (violations: ReadonlyArray<AxeViolation>): string =>
  violations.map((violation) =>
    `${violation.id} [${violation.impact}]: ${violation.help}\n${violation.targets.map((target) => `  - ${target}`).join("\n")}`
  ).join("\n")

/** Fails the test, naming each offending element, when axe-core finds a serious or critical violation. */
export const expectNoSeriousViolations = async (page: Page, label: string, include?: string): Promise<void> => {
  const violations = await seriousViolations(page, include)
  expect(
    violations.length === 0
      ? ""
      : `${label}: axe-core found ${violations.length} serious or critical violation(s)\n${formatViolations(violations)}`
  ).toBe("")
}
