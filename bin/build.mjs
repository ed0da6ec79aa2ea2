#!/usr/bin/env node
// Compiles the server (src/) and the project's integrations (integrations/) to JavaScript in dist/server/,
// file for file, so `cairn serve` runs without a TypeScript loader (no tsx, no esbuild service
// process, no inline source maps in the heap). esbuild is the transpiler tsx already runs, so the
// compiled code is what the source run executes. Each relative `.ts` import becomes `.js`; packages
// stay imports. dist/server/build.json records the newest source time the build saw: bin/cairn.mjs runs it
// only while no source is newer (see sourcesStamp).
import * as esbuild from "esbuild"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import { isServerSource, makeCurrent, newBuildDir, root, sourceRoots, sourcesStamp } from "./dist.mjs"

const entries = (dir) =>
  fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const file = path.join(dir, entry.name)
    if (entry.isDirectory()) return isServerSource(file) ? entries(file) : []
    return /\.m?ts$/.test(entry.name) && !entry.name.endsWith(".d.ts") ? [file] : []
  })

// Taken before compiling, so an edit made while the build runs leaves dist/ stale, not wrongly fresh.
const stamp = sourcesStamp()

// In bundle mode esbuild lets a plugin answer every import: relative ones stay separate files
// (external) with the extension rewritten, so nothing is actually bundled.
const relativeTs = {
  name: "relative-ts-to-js",
  setup(build) {
    build.onResolve(
      { filter: /^\.\.?\// },
      (args) => args.kind === "entry-point" ? undefined : { path: args.path.replace(/\.(m?)ts$/, ".$1js"), external: true }
    )
  }
}

// An `@effect/*` package's index imports every module of the package (`@effect/platform`'s holds the
// API docs pages' bundled viewers, ~20 MB of strings); node does not tree-shake. Each named import
// of an index becomes the import of that one module (every name these indexes export is a module
// namespace), so only what the server uses loads, and the docs pages on their first request
// (src/http/Server.ts). `effect`'s own index also exports functions, so it stays.
const effectPackageIndex = /import\s+(type\s+)?\{([^}]*)\}\s*from\s*"(@effect\/[a-z-]+)"/g
const deepEffectImports = {
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

// Built in a folder of its own and made current at the end, so a server starting or running from
// dist/ meanwhile never sees half of it (bin/dist.mjs).
const next = newBuildDir()
await esbuild.build({
  entryPoints: sourceRoots.flatMap((dir) => entries(path.join(root, dir))),
  outdir: next,
  outbase: root,
  bundle: true,
  packages: "external",
  plugins: [relativeTs, deepEffectImports],
  platform: "node",
  format: "esm",
  target: "node20",
  outExtension: { ".js": ".js" },
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
