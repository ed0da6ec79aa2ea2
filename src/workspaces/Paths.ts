/**
 * Workspace paths: what a caller may name, and where it lands on disk. A path is relative, with
 * '/' between segments; '..', absolute paths, backslashes, NUL and control characters are refused
 * before the file system is touched, and every existing component is checked so that a symbolic
 * link cannot lead outside the workspace.
 */
import { Either } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"

export const maxPathLength = 1024
export const maxSegmentBytes = 255

/** The normalised segments of a workspace path, or why it is refused. */
export const parseWorkspacePath = (raw: string): Either.Either<ReadonlyArray<string>, string> => {
  if (raw.includes("\0")) return Either.left("path must not contain NUL characters")
  // eslint-disable-next-line no-control-regex
  if (/[\x01-\x1f\x7f]/.test(raw)) return Either.left("path must not contain control characters")
  if (raw.startsWith("/") || /^[A-Za-z]:/.test(raw)) return Either.left("absolute paths are not allowed")
  if (raw.includes("\\")) return Either.left("path must use '/' between segments, not '\\'")
  if (raw.length > maxPathLength) return Either.left(`path must be at most ${maxPathLength} characters`)
  const segments = raw.split("/").filter((segment) => segment !== "" && segment !== ".")
  if (segments.some((segment) => segment === "..")) return Either.left("'..' is not allowed in workspace paths")
  if (segments.some((segment) => Buffer.byteLength(segment) > maxSegmentBytes)) {
    return Either.left(`a path segment must be at most ${maxSegmentBytes} bytes`)
  }
  if (segments.length === 0) return Either.left("path must name a file")
  return Either.right(segments)
}

/** The display form of parsed segments. */
export const joinSegments = (segments: ReadonlyArray<string>) => segments.join("/")

export const isInside = (root: string, candidate: string) =>
  candidate === root || candidate.startsWith(root.endsWith(path.sep) ? root : root + path.sep)

/**
 * The real location of `segments` under the real root `realRoot`, following symbolic links only
 * while they stay inside it. Components that do not exist yet are appended as they are (they can
 * only be created inside). Left: why the path is refused.
 */
export const resolveInside = (realRoot: string, segments: ReadonlyArray<string>): Either.Either<string, string> => {
  let current = realRoot
  for (let index = 0; index < segments.length; index++) {
    const next = path.join(current, segments[index]!)
    let stat: fs.Stats
    try {
      stat = fs.lstatSync(next)
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return Either.right(path.join(current, ...segments.slice(index)))
      if ((error as NodeJS.ErrnoException).code === "ENOTDIR") return Either.left("a parent of the path is a file")
      throw error
    }
    if (stat.isSymbolicLink()) {
      let target: string
      try {
        target = fs.realpathSync(next)
      } catch {
        // A dangling link would let a write create its target wherever it points.
        return Either.left("path goes through a symbolic link whose target does not exist")
      }
      if (!isInside(realRoot, target)) return Either.left("path resolves outside the workspace")
      current = target
    } else {
      current = next
    }
  }
  return Either.right(current)
}
