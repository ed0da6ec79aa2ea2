/**
 * The checkout's folder, which holds what the server reads at run time (migrations/, bots/, skills/,
 * carapaces/, workflows/, workspace-templates/, integrations/). Found by walking up to package.json,
 * so it is the same whether this file runs from src/ or compiled into dist/server/src/.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

/** The nearest folder at or above `dir` that holds `file` (the file system's root when none does). */
const folderHolding = (file: string, dir: string): string =>
  fs.existsSync(path.join(dir, file)) || path.dirname(dir) === dir ? dir : folderHolding(file, path.dirname(dir))

const here = path.dirname(fileURLToPath(import.meta.url))

export const projectRoot = folderHolding("package.json", here)

/** A folder of the checkout by name (`projectDir("migrations")`). */
export const projectDir = (name: string) => path.join(projectRoot, name)

/** Whether this process runs the compiled server (dist/server/, see bin/build.mjs) rather than TypeScript. */
export const runningCompiled = import.meta.url.endsWith(".js")

/**
 * The build this process runs (the folder above this code holding its build.json: the code may sit
 * in a chunk of the bundle, bin/build.mjs), not dist/server's link, which a later build may have
 * moved on (bin/dist.mjs).
 */
const buildRoot = runningCompiled ? folderHolding("build.json", here) : path.join(projectRoot, "dist", "server")

/** A file of the checkout as this process's build compiled it (`integrations/x/a.ts` → `<build>/integrations/x/a.js`), or null outside the checkout. */
export const compiledFile = (file: string): string | null => {
  const relative = path.relative(projectRoot, file)
  return relative.startsWith("..") || path.isAbsolute(relative)
    ? null
    : path.join(buildRoot, relative.replace(/\.ts$/, ".js"))
}
