#!/usr/bin/env node
// Compiles the server (src/) and the project's integrations (integrations/) to JavaScript in
// dist/server/, so `cairn serve` runs without a TypeScript loader (no tsx, no esbuild service
// process, no inline source maps in the heap). esbuild is the transpiler tsx already runs, so the
// compiled code is what the source run executes.
//
// The build is bundled, packages included, and split into chunks: node spends most of a start
// resolving and compiling modules (about 1,600 of them, file for file), and a bundle of the same code
// imports in half the CPU and leaves out what nothing uses (bench/serverStart.ts). Each file the
// run loads by path is an entry of its own at its own path (`src/cli.js`, each integration's files);
// the code they share is in `chunks/`, so every module still has one instance, and what loads on
// first use (a provider family, the docs pages) is a chunk loaded then. dist/server/build.json
// records the newest source time the build saw: bin/cairn.mjs runs it only while no source is newer
// (see sourcesStamp).
import * as esbuild from "esbuild"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import { makeCurrent, newBuildDir, root, sourcesStamp } from "./dist.mjs"

/** Every file under `dir` the loader may import by path. */
const sources = (dir) =>
  fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const file = path.join(dir, entry.name)
    if (entry.isDirectory()) return sources(file)
    return /\.m?ts$/.test(entry.name) && !entry.name.endsWith(".d.ts") ? [file] : []
  })

/**
 * What is loaded by path rather than imported: the command (bin/cairn.mjs), the help it answers
 * from and what saves that help (below), and every file of the project's integrations
 * (src/integrations/Loader.ts).
 */
const entryPoints = [
  "src/cli.ts",
  "src/cli/Help.ts",
  "src/commands.ts",
  "src/cli/HelpTree.ts",
  "src/contract/Version.ts"
].map((file) => path.join(root, file)).concat(sources(path.join(root, "integrations")))

/**
 * Packages left to node_modules: each finds files of its own beside its code at run time (PGlite's
 * and ONNX Runtime's WebAssembly, pdf.js's, pino's worker under imapflow, msgpackr's optional native
 * addon, mqtt's timers), and none shares a module with the bundle, so nothing loads twice. tsx and
 * esbuild are the loader for TypeScript outside the build.
 */
const external = [
  "@electric-sql/pglite",
  "@electric-sql/pglite-pgvector",
  "onnxruntime-web",
  "unpdf",
  "imapflow",
  "msgpackr",
  "mqtt",
  "tsx",
  "esbuild"
]

// esbuild leaves out what nothing uses, but not a module a package's index re-exports: `effect`'s
// and each `@effect/*` package's index import every module of the package (`@effect/platform`'s
// holds the API docs pages' viewers, about 5 MB of strings, which the CLI never shows). Each named
// import of such an index becomes the import of that one module (every name Cairn imports from these
// indexes is a module namespace), so the bundle holds the modules used: the CLI's 2 MB, not 10.
const effectPackageIndex = /import\s+(type\s+)?\{([^}]*)\}\s*from\s*"(effect|@effect\/[a-z-]+)"/g
const effectModules = {
  name: "effect-package-modules",
  setup(build) {
    build.onLoad({ filter: /\.m?ts$/ }, (args) => ({
      loader: "ts",
      contents: fs.readFileSync(args.path, "utf8").replace(effectPackageIndex, (_, typeOnly, names, pkg) =>
        names
          .split(",")
          .map((name) => name.trim())
          .filter((name) => name.length > 0)
          .map((name) => {
            const [, type, module, local] = /^(type\s+)?(\w+)(?:\s+as\s+(\w+))?$/.exec(name)
            return `import ${typeOnly || type ? "type " : ""}* as ${local ?? module} from "${pkg}/${module}"`
          })
          .join("; "))
    }))
  }
}

// Taken before compiling, so an edit made while the build runs leaves dist/ stale, not wrongly fresh.
const stamp = sourcesStamp()

// Built in a folder of its own and made current at the end, so a server starting or running from
// dist/ meanwhile never sees half of it (bin/dist.mjs).
const next = newBuildDir()
await esbuild.build({
  entryPoints,
  outdir: next,
  outbase: root,
  chunkNames: "chunks/[name]-[hash]",
  bundle: true,
  splitting: true,
  plugins: [effectModules],
  external: external.flatMap((name) => [name, `${name}/*`]),
  // The CommonJS packages in the bundle call `require` for node's own modules.
  banner: { js: "import { createRequire as __cairnRequire } from \"node:module\"; const require = __cairnRequire(import.meta.url);" },
  // Bundling renames a top-level name two modules share; an error class's name must stay its own.
  keepNames: true,
  platform: "node",
  format: "esm",
  target: "node20",
  tsconfig: path.join(root, "tsconfig.json"),
  logLevel: "warning"
})
fs.writeFileSync(path.join(next, "build.json"), JSON.stringify({ sources: stamp }) + "\n")
// The commands' help, saved for bin/cairn.mjs to answer `--help` and `--version` without loading them.
{
  const load = (file) => import(pathToFileURL(path.join(next, file)).href)
  const [{ cairn, examples }, { helpTreeOf }, { cairnVersion }] = await Promise.all([
    load("src/commands.js"),
    load("src/cli/HelpTree.js"),
    load("src/contract/Version.js")
  ])
  fs.writeFileSync(path.join(next, "help.json"), JSON.stringify(helpTreeOf(cairn, cairnVersion, examples)) + "\n")
}
makeCurrent(next)
if (process.argv[1] === fileURLToPath(import.meta.url)) console.log(`Built ${path.relative(process.cwd(), next) || "."}/`)
