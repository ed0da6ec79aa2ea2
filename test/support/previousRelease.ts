/**
 * The previous release, for the tests of a rolling upgrade (test/operations/rollingUpgrade.test.ts,
 * test/cluster/): the code as it was before the newest migration (or CAIRN_PREVIOUS_RELEASE, a git
 * ref: set it to the last release's tag when cutting one), taken from git into a directory of its
 * own and run from source with this checkout's packages.
 */
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { tempDir } from "./database.ts"

const root = path.resolve(import.meta.dirname, "../..")
const git = (...args: Array<string>) => execFileSync("git", args, { cwd: root, encoding: "utf8" }).trim()

/** The previous release's commit: a named ref, or the commit before the newest migration came. */
export const previousRelease = () => {
  const named = process.env.CAIRN_PREVIOUS_RELEASE
  if (named) return git("rev-parse", "--verify", `${named}^{commit}`)
  return git("rev-parse", "--verify", `${git("log", "-1", "--format=%H", "--", "migrations")}^`)
}

/** The release's tree in a directory of its own, sharing this checkout's installed packages; removed by the caller. */
export const checkOutPreviousRelease = (commit = previousRelease()) => {
  const dir = tempDir("cairn-previous-release-")
  execFileSync("sh", ["-c", `git archive ${commit} | tar -x -C "${dir}"`], { cwd: root })
  fs.symlinkSync(path.join(root, "node_modules"), path.join(dir, "node_modules"), "dir")
  return dir
}
