/**
 * Where integrations come from: the project's `integrations/`, each INTEGRATION_DIRS entry, then
 * the shared workspace's `integrations/`, in that order. The folder name is the id; a later
 * directory's folder replaces an earlier one of the same name; names starting with `_` or `.` are
 * ignored.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { projectDir } from "../config/ProjectRoot.ts"

export const projectIntegrationsDir = projectDir("integrations")

export interface Candidate {
  readonly id: string
  readonly dir: string
  /** Which search directory it came from. */
  readonly root: string
  /** Earlier folders of the same id that this one replaced. */
  readonly overrides: ReadonlyArray<string>
}

export const searchDirs = (options: { readonly integrationDirs: ReadonlyArray<string>; readonly dataDir: string }) => [
  projectIntegrationsDir,
  ...options.integrationDirs.map((dir) => path.resolve(dir)),
  path.resolve(options.dataDir, "workspace", "integrations")
]

export const discover = (roots: ReadonlyArray<string>): Array<Candidate> => {
  const byId = new Map<string, Candidate>()
  for (const root of roots) {
    if (!fs.existsSync(root) || !fs.statSync(root).isDirectory()) continue
    for (const name of fs.readdirSync(root).sort()) {
      if (name.startsWith("_") || name.startsWith(".")) continue
      const dir = path.join(root, name)
      if (!fs.statSync(dir).isDirectory()) continue
      const earlier = byId.get(name)
      byId.set(name, { id: name, dir, root, overrides: earlier ? [...earlier.overrides, earlier.dir] : [] })
    }
  }
  return [...byId.values()].sort((a, b) => a.id.localeCompare(b.id))
}
