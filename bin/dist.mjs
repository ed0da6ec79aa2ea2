// Where the compiled server lives (dist/server/, git-ignored; the web app is built beside it in dist/web/) and whether it is current. Shared by
// bin/build.mjs, which writes it, and bin/cairn.mjs, which runs it when fresh.
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")
export const distDir = path.join(root, "dist", "server")
/** The folders compiled; what they hold decides whether dist/ is current. */
export const sourceRoots = ["src", "integrations"]
/** The browser app under src/ is Vite's to build (dist/web/), not the server's. */
export const isServerSource = (dir) => dir !== path.join(root, "src", "web")

/**
 * The newest modification time in the compiled folders, directories included (adding, removing or
 * renaming a file changes its directory's time): a few milliseconds for a few hundred files.
 */
export const sourcesStamp = () => {
  let newest = 0
  const walk = (dir) => {
    newest = Math.max(newest, fs.statSync(dir).mtimeMs)
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const file = path.join(dir, entry.name)
      if (entry.isDirectory()) {
        if (isServerSource(file)) walk(file)
      } else newest = Math.max(newest, fs.statSync(file).mtimeMs)
    }
  }
  for (const dir of sourceRoots) walk(path.join(root, dir))
  return newest
}

/** Whether dist/ was built from the sources as they are now. */
export const distIsFresh = () => {
  try {
    const { sources } = JSON.parse(fs.readFileSync(path.join(distDir, "build.json"), "utf8"))
    return typeof sources === "number" && sourcesStamp() <= sources
  } catch {
    return false
  }
}
