/** Integration code imports nothing from src/ but the SDK (the spec's rule, checked on every file). */
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "vitest"
import { importsOf, root, sourceFiles } from "../support/imports.ts"

const integrationsDir = path.join(root, "integrations")
const sdkDir = path.join(root, "src", "sdk")

export const violations = (files: ReadonlyArray<string>, read: (file: string) => string = (file) => fs.readFileSync(file, "utf8")) =>
  files.flatMap((file) =>
    importsOf(read(file)).flatMap((specifier) => {
      if (!specifier.startsWith(".")) return /^cairn\/(?!sdk$)/.test(specifier) ? [`${file}: ${specifier}`] : []
      const target = path.resolve(path.dirname(file), specifier)
      const inSrc = target.startsWith(path.join(root, "src") + path.sep)
      return inSrc && !target.startsWith(sdkDir) ? [`${path.relative(root, file)} imports ${specifier}`] : []
    })
  )

describe("integration import boundary", () => {
  it("finds a forbidden import when there is one", () => {
    // A file as if under integrations/, read from memory: writing one there would change the
    // folder's time, and so make a built dist/ stale for every server the suite starts after it.
    const file = path.join(integrationsDir, "boundary-probe", "bad.ts")
    const source = "import { Bots } from \"../../src/bots/Bots.ts\"\nimport { defineTool } from \"../../src/sdk/index.ts\"\n"
    expect(violations([file], () => source)).toEqual([`${path.relative(root, file)} imports ../../src/bots/Bots.ts`])
  })

  it("holds for the SDK itself: src/sdk imports nothing else from src/", () => {
    const files = sourceFiles(sdkDir)
    expect(files.length).toBeGreaterThan(0)
    expect(violations(files)).toEqual([])
  })

  it("holds for every file under integrations/", () => {
    const files = sourceFiles(integrationsDir)
    expect(files.length).toBeGreaterThan(0)
    expect(violations(files)).toEqual([])
  })
})
