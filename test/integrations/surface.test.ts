/**
 * The SDK's public surface, read from its source with the TypeScript compiler: everything
 * `src/sdk/index.ts` exports, each member of the `cairn` context (two levels deep) and of the
 * worker's context. Each must have an entry in docs/integrations.md's SDK reference, so nothing is
 * added to the SDK without its documentation; and at run time the SDK exports only its helpers.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import ts from "typescript"
import { describe, expect, it } from "vitest"
import { root } from "../support/imports.ts"

const sdkEntry = path.join(root, "src", "sdk", "index.ts")
const guide = path.join(root, "docs", "integrations.md")

/** The surface as documentation names it: export names, `cairn.<member>[.<member>]`, `worker.<member>`. */
const sdkSurface = (): Array<string> => {
  const program = ts.createProgram([sdkEntry], {
    strict: true,
    allowImportingTsExtensions: true,
    noEmit: true,
    target: ts.ScriptTarget.ES2022,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    module: ts.ModuleKind.ESNext
  })
  const checker = program.getTypeChecker()
  const source = program.getSourceFile(sdkEntry)!
  const exported = checker.getExportsOfModule(checker.getSymbolAtLocation(source)!)
  const names = exported.map((symbol) => symbol.getName())
  const typeOf = (name: string) => {
    const symbol = exported.find((s) => s.getName() === name)!
    return checker.getDeclaredTypeOfSymbol(symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol)
  }
  /** Members of an object type; a member that is itself an object of properties (not a function) goes one level further. */
  const members = (type: ts.Type, prefix: string, depth: number): Array<string> =>
    type.getProperties().flatMap((property) => {
      const entry = `${prefix}.${property.getName()}`
      const memberType = checker.getTypeOfSymbol(property)
      const isObject = memberType.getCallSignatures().length === 0 && memberType.getProperties().length > 0 &&
        !(memberType.flags & ts.TypeFlags.StringLike)
      return depth > 1 && isObject ? [entry, ...members(memberType, entry, depth - 1)] : [entry]
    })
  return [...names, ...members(typeOf("IntegrationContext"), "cairn", 2), ...members(typeOf("WorkerContext"), "worker", 1)].sort()
}

/** The SDK reference section of the integration guide. */
const reference = () => {
  const text = fs.readFileSync(guide, "utf8")
  const start = text.indexOf("## SDK reference")
  expect(start).toBeGreaterThan(-1)
  const end = text.indexOf("\n## ", start + 1)
  return text.slice(start, end === -1 ? undefined : end)
}

/** A dotted path counts where it is used (prose or a snippet); a bare name only in backticks. */
const documented = (section: string, entry: string) => {
  const name = entry.replace(/\./g, "\\.")
  return new RegExp(entry.includes(".") ? `(?<![\\w.])${name}(?![\\w])` : "`" + name + "(?![\\w])").test(section)
}

describe("the SDK's public surface", () => {
  it("is read from the source: every export and context member, nothing internal", () => {
    const surface = sdkSurface()
    expect(surface).toEqual(
      expect.arrayContaining([
        "defineWorker",
        "IntegrationContext",
        "cairn.store.lru",
        "cairn.llm.complete",
        "cairn.runs.run",
        "cairn.http.request",
        "worker.signal"
      ])
    )
    expect(surface.some((entry) => /Error$/.test(entry))).toBe(false)
    if (process.env.PRINT_SDK_SURFACE) console.log(surface.join("\n"))
  })

  it("has an entry in docs/integrations.md's SDK reference for each part", () => {
    const section = reference()
    const missing = sdkSurface().filter((entry) => !documented(section, entry))
    expect(missing).toEqual([])
  })

  it("finds a part that is not documented (probe)", () => {
    expect(documented("`cairn.store.get(key)`", "cairn.store.get")).toBe(true)
    expect(documented("await cairn.store.get(key)", "cairn.store.get")).toBe(true)
    expect(documented("`cairn.store.getAll(key)`", "cairn.store.get")).toBe(false)
    expect(documented("xcairn.store.get()", "cairn.store.get")).toBe(false)
    expect(documented("a Worker of", "Worker")).toBe(false)
    expect(documented("`Worker`", "Worker")).toBe(true)
  })

  it("exports only its helpers at run time (everything else is types)", async () => {
    const module = await import("../../src/sdk/index.ts")
    expect(Object.keys(module).sort()).toEqual([
      "InvalidArgument",
      "SettingType",
      "UncertainDelivery",
      "defineDispatchers",
      "defineHooks",
      "defineRoutes",
      "defineSetup",
      "defineTool",
      "defineWorker",
      "isInvalidArgument",
      "readSettings",
      "respond",
      "settingProblem"
    ])
  })
})
