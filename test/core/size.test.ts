/**
 * The size rule of the house: no file in `src/` or `integrations/` over 400 lines, no function over
 * 80 lines of its own (test/support/sizes.ts says how a function is measured). Probes check that the
 * measure finds what it must.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "vitest"
import { root, sourceFiles } from "../support/imports.ts"
import { lineCount, maxFileLines, maxFunctionLines, oversizedFunctions } from "../support/sizes.ts"

/** TypeScript written here, the web app's .tsx included; declaration files hold no code. */
const written = (dir: string) => sourceFiles(path.join(root, dir), /(?<!\.d)\.tsx?$/)
const files = [...written("src"), ...written("integrations")]
const relative = (file: string) => path.relative(root, file)

const body = (lines: number) => Array.from({ length: lines }, (_, n) => `  const v${n} = ${n}`).join("\n")

describe("sizes in src/ and integrations/", () => {
  it("no file is over 400 lines", () => {
    expect(files.length).toBeGreaterThan(300)
    const long = files.flatMap((file) => {
      const lines = lineCount(fs.readFileSync(file, "utf8"))
      return lines > maxFileLines ? [`${relative(file)}: ${lines} lines`] : []
    })
    expect(long).toEqual([])
  })

  it("no function is over 80 lines of its own", () => {
    const long = files.flatMap((file) => oversizedFunctions(file, fs.readFileSync(file, "utf8")))
    expect(long.map((found) => `${relative(found.file)}:${found.line} ${found.name}: ${found.lines} lines`)).toEqual([])
  })

  it("a function over the limit is found, by the name it is known by (probe)", () => {
    const text = `export const short = () => 1\nexport const long = () => {\n${body(maxFunctionLines)}\n}\n`
    expect(oversizedFunctions("probe.ts", text)).toEqual([{ file: "probe.ts", line: 2, name: "long", lines: maxFunctionLines + 2 }])
    const method = `export class S extends Effect.Service<S>()("S", {\n  effect: Effect.gen(function*() {\n${body(90)}\n  })\n}) {}\n`
    expect(oversizedFunctions("probe.ts", method).map((found) => found.name)).toEqual(["effect"])
    const spanned = `export const f = tracedFn("Domain.method", () => {\n${body(90)}\n})\n`
    expect(oversizedFunctions("probe.ts", spanned).map((found) => found.name)).toEqual(["Domain.method"])
  })

  it("a function's nested functions are measured by themselves, not counted to it (probe)", () => {
    const nested = `const outer = () => {\n  const a = () => {\n${body(60)}\n  }\n  const b = () => {\n${
      body(60)
    }\n  }\n  return [a, b]\n}\n`
    expect(oversizedFunctions("probe.tsx", nested)).toEqual([])
    const tooLongInside = `const outer = () => {\n  const a = () => {\n${body(85)}\n  }\n  return a\n}\n`
    expect(oversizedFunctions("probe.ts", tooLongInside)).toEqual([{ file: "probe.ts", line: 2, name: "a", lines: 87 }])
  })
})
