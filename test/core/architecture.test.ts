/**
 * The house's two structural rules, checked on the import graph of `src/` as it is:
 * - dependencies between the folders of `src/` run one way (no folder cycle);
 * - the contract (`src/client.ts`, which imports `src/Api.ts`, and the SSE event schema) imports
 *   only `effect`, `@effect/platform` and `@effect/experimental` (its SSE reader), so a browser or
 *   a thin CLI can use it;
 * - the command-line client (`src/cli/`) stands on the contract alone: no server module.
 * Each rule also has a probe: the same check over the real tree with one import added, which must fail.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "vitest"
import { closure, cycles, folderGraph, root } from "../support/imports.ts"

const srcDir = path.join(root, "src")
// The contract: the typed client, the run events, and the provider presets the console and the CLI offer.
const contractEntries = [
  path.join(srcDir, "client.ts"),
  path.join(srcDir, "agent", "Events.ts"),
  path.join(srcDir, "providers", "Presets.ts")
]
const contractPackages = new Set(["effect", "@effect/platform", "@effect/experimental"])

const read = (file: string) => fs.readFileSync(file, "utf8")
/** The real tree, with one extra import line at the top of one file. */
const withImport = (file: string, specifier: string) => (candidate: string) =>
  candidate === file ? `import "${specifier}"\n${read(candidate)}` : read(candidate)

const describeCycles = (edges: ReturnType<typeof folderGraph>) =>
  cycles(edges).map((members) =>
    members
      .flatMap((from) => members.filter((to) => edges.get(from)?.has(to)).map((to) => `${from} -> ${to} (${edges.get(from)!.get(to)})`))
      .join("; ")
  )

const foreignPackages = (read_: (file: string) => string) =>
  [...closure(contractEntries, read_).packages].filter(([pkg]) => !contractPackages.has(pkg)).map(([pkg, via]) => `${pkg} via ${via}`)

describe("folders of src/", () => {
  it("depend on each other one way: no cycle", () => {
    const edges = folderGraph(srcDir)
    expect(edges.size).toBeGreaterThan(10)
    expect(describeCycles(edges)).toEqual([])
  })

  it("a cycle is found when one import closes it (probe: sessions importing the message intake)", () => {
    const probe = withImport(path.join(srcDir, "sessions", "Sessions.ts"), "../intake/Intake.ts")
    const found = cycles(folderGraph(srcDir, probe))
    expect(found.length).toBe(1)
    expect(found[0]).toEqual(expect.arrayContaining(["intake", "sessions"]))
  })
})

describe("the contract (typed client and SSE event schema)", () => {
  it("imports only effect and @effect/platform", () => {
    const { files, packages } = closure(contractEntries)
    expect(files.size).toBeGreaterThan(20)
    expect([...packages.keys()]).toEqual(expect.arrayContaining(["effect", "@effect/platform"]))
    expect(foreignPackages(read)).toEqual([])
  })

  it("a server import is found wherever it enters (probe: a model file importing the database)", () => {
    const probe = withImport(path.join(srcDir, "bots", "Model.ts"), "../db/Database.ts")
    expect(foreignPackages(probe)).toEqual(expect.arrayContaining([expect.stringMatching(/^@effect\/sql via src\/db\//)]))
  })
})

describe("the command-line client (src/cli/)", () => {
  const cliDir = path.join(srcDir, "cli")
  const cliEntries = fs.readdirSync(cliDir).map((file) => path.join(cliDir, file))
  const clientPackages = new Set([...contractPackages, "@effect/cli", "yaml"])
  const serverFiles = (read_: (file: string) => string) => {
    const contract = closure(contractEntries, read_).files
    return [...closure(cliEntries, read_).files].filter((file) => !file.startsWith(cliDir) && !contract.has(file)).map((file) =>
      path.relative(srcDir, file)
    )
  }

  it("imports only the contract and client-side packages", () => {
    expect(cliEntries.length).toBeGreaterThan(5)
    expect(serverFiles(read)).toEqual([])
    const { packages } = closure(cliEntries)
    expect([...packages.keys()].filter((pkg) => !clientPackages.has(pkg) && !pkg.startsWith("node:"))).toEqual([])
  })

  it("a server import is found (probe: the chat importing the database)", () => {
    const probe = withImport(path.join(cliDir, "Chat.ts"), "../db/Database.ts")
    expect(serverFiles(probe)).toEqual(expect.arrayContaining(["db/Database.ts"]))
  })
})
