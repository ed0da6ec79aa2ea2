/**
 * Integration folders for tests: written into a temporary directory that the server is pointed at
 * with INTEGRATION_DIRS, each file given as its text. Integration code in them uses plain objects
 * (every `define*` of the SDK returns its argument), so they import nothing.
 */
import * as fs from "node:fs"
import * as path from "node:path"

/** Writes `files` (relative path → text) as the integration `id` under `root`; answers its folder. */
export const writeIntegration = (root: string, id: string, files: Record<string, string>): string => {
  // Outside the project's package, `.ts` files with imports load as ES modules only when their
  // package says so (as docs/integrations.md tells authors).
  if (!fs.existsSync(path.join(root, "package.json"))) fs.writeFileSync(path.join(root, "package.json"), "{ \"type\": \"module\" }\n")
  const dir = path.join(root, id)
  for (const [name, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, name)), { recursive: true })
    fs.writeFileSync(path.join(dir, name), text)
  }
  return dir
}

/** Polls `probe` until it answers something other than undefined (deadline scaled by TEST_TIME_SCALE). */
export { waitFor } from "./time.ts"

/** Lines of a file written by a test integration (missing file: none). */
export const linesOf = (
  file: string
): Array<string> => (fs.existsSync(file) ? fs.readFileSync(file, "utf8").split("\n").filter(Boolean) : [])
