/** Integration code imports nothing from src/ but the SDK (the spec's rule, checked on every file). */
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "vitest"

const root = path.resolve(import.meta.dirname, "../..")
const integrationsDir = path.join(root, "integrations")
const sdkDir = path.join(root, "src", "sdk")

const sourceFiles = (dir: string): Array<string> =>
  fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name)
    if (entry.isDirectory()) return entry.name === "node_modules" ? [] : sourceFiles(full)
    return /\.(ts|mts|js|mjs)$/.test(entry.name) ? [full] : []
  })

/** Every module specifier a file imports (static, dynamic and re-exports). */
export const importsOf = (source: string): Array<string> =>
  [...source.matchAll(/(?:import|export)\s[^'"]*?from\s*["']([^"']+)["']|import\s*\(\s*["']([^"']+)["']\s*\)|import\s+["']([^"']+)["']/g)].map(
    (m) => m[1] ?? m[2] ?? m[3]!
  )

export const violations = (files: ReadonlyArray<string>) =>
  files.flatMap((file) =>
    importsOf(fs.readFileSync(file, "utf8")).flatMap((specifier) => {
      if (!specifier.startsWith(".")) return /^cairn\/(?!sdk$)/.test(specifier) ? [`${file}: ${specifier}`] : []
      const target = path.resolve(path.dirname(file), specifier)
      const inSrc = target.startsWith(path.join(root, "src") + path.sep)
      return inSrc && !target.startsWith(sdkDir) ? [`${path.relative(root, file)} imports ${specifier}`] : []
    })
  )

describe("integration import boundary", () => {
  it("finds a forbidden import when there is one", () => {
    const dir = fs.mkdtempSync(path.join(integrationsDir, ".boundary-probe-"))
    try {
      const file = path.join(dir, "bad.ts")
      fs.writeFileSync(file, 'import { Bots } from "../../src/bots/Bots.ts"\nimport { defineTool } from "../../src/sdk/index.ts"\n')
      expect(violations([file])).toEqual([`${path.relative(root, file)} imports ../../src/bots/Bots.ts`])
    } finally {
      fs.rmSync(dir, { recursive: true, force: true })
    }
  })

  it("holds for every file under integrations/", () => {
    const files = sourceFiles(integrationsDir)
    expect(files.length).toBeGreaterThan(0)
    expect(violations(files)).toEqual([])
  })
})
