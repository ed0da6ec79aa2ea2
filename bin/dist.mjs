// Where the compiled server lives (dist/server/, git-ignored; the web app is built beside it in dist/web/) and whether it is current. Shared by
// bin/build.mjs, which writes it, and bin/cairn.mjs, which runs it when fresh.
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..")
/**
 * The current build: a symbolic link to one build folder beside it (`dist/server-<time>-<pid>`). A
 * build is made in a folder of its own and the link is swapped to it in one rename, so a process
 * still loading, or one that imports a module on first use, keeps reading the build it started on
 * (node resolves the link to the real folder) while a newer build becomes the current one.
 */
export const distDir = path.join(root, "dist", "server")
const buildsDir = path.dirname(distDir)
const buildName = /^server-\d+-\d+$/
const runningDir = (build) => path.join(build, ".running")
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

/** This process's build folder of time `ms`: the time in its name orders the builds (`buildName`). */
const buildDirAt = (ms) => path.join(buildsDir, `server-${String(ms).padStart(15, "0")}-${process.pid}`)

/** A new, empty build folder for bin/build.mjs to fill. */
export const newBuildDir = () => buildDirAt(Date.now())

const isAlive = (pid) => {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return error.code === "EPERM"
  }
}

/**
 * Makes `build` the current one, then removes the builds no process runs: every one but the current
 * and the two newest (a process may be between resolving the link and marking its build), unless a
 * process marked under `.running/` is alive. A dist/server of the layout before links (a folder)
 * is moved aside first.
 */
export const makeCurrent = (build) => {
  const link = `${distDir}.link-${process.pid}`
  fs.rmSync(link, { force: true })
  fs.symlinkSync(path.basename(build), link)
  if (fs.existsSync(distDir) && !fs.lstatSync(distDir).isSymbolicLink()) {
    fs.renameSync(distDir, buildDirAt(0))
  }
  fs.renameSync(link, distDir)
  const builds = fs.readdirSync(buildsDir).filter((name) => buildName.test(name)).sort().reverse()
  const current = path.basename(fs.realpathSync(distDir))
  for (const name of builds.slice(2)) {
    if (name === current) continue
    const dir = path.join(buildsDir, name)
    const running = fs.existsSync(runningDir(dir)) ? fs.readdirSync(runningDir(dir)) : []
    if (!running.some((pid) => isAlive(Number(pid)))) fs.rmSync(dir, { recursive: true, force: true })
  }
}

/**
 * Marks the current build as run by this process until it exits, so no later build removes it, and
 * gives its real folder: the process imports from there, not through the link a build may swap.
 */
export const holdCurrentBuild = () => {
  const build = fs.realpathSync(distDir)
  const marker = path.join(runningDir(build), String(process.pid))
  try {
    fs.mkdirSync(path.dirname(marker), { recursive: true })
    fs.writeFileSync(marker, "")
    process.once("exit", () => fs.rmSync(marker, { force: true }))
  } catch {
    // A read-only install (a container image, say) is never built again in place: nothing to hold.
  }
  return build
}
