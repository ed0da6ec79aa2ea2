/** The workspace path rules, directly: what is refused before the file system is touched, and symlink resolution. */
import { Either } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { parseWorkspacePath, resolveInside } from "../../src/workspaces/Paths.ts"
import { tempDir } from "../support/database.ts"

describe("parseWorkspacePath", () => {
  it("normalises '.' and empty segments", () => {
    expect(parseWorkspacePath("notes/./todo.md")).toEqual(Either.right(["notes", "todo.md"]))
    expect(parseWorkspacePath("a//b/")).toEqual(Either.right(["a", "b"]))
    expect(parseWorkspacePath("data/INBOX/2026-01-01-hi there.md")).toEqual(Either.right(["data", "INBOX", "2026-01-01-hi there.md"]))
  })

  it.each([
    ["..", "'..' is not allowed"],
    ["../secret", "'..' is not allowed"],
    ["notes/../../secret", "'..' is not allowed"],
    ["/etc/passwd", "absolute paths"],
    ["C:/Windows/win.ini", "absolute paths"],
    ["..\\..\\secret", "not '\\'"],
    ["notes\0.md", "NUL"],
    ["notes\n.md", "control characters"],
    ["", "must name a file"],
    ["./", "must name a file"],
    ["a/" + "x".repeat(256), "at most 255 bytes"],
    ["x/".repeat(600), "at most 1024 characters"]
  ])("refuses %j", (raw, message) => {
    const parsed = parseWorkspacePath(raw)
    expect(Either.isLeft(parsed)).toBe(true)
    expect(Either.getLeft(parsed).pipe((o) => (o._tag === "Some" ? o.value : ""))).toContain(message)
  })
})

describe("resolveInside", () => {
  const base = tempDir("cairn-ws-paths-")
  const root = path.join(base, "root")
  const outside = path.join(base, "outside")
  fs.mkdirSync(path.join(root, "notes"), { recursive: true })
  fs.mkdirSync(outside)
  fs.writeFileSync(path.join(outside, "secret.txt"), "secret")
  fs.writeFileSync(path.join(root, "notes", "todo.md"), "todo")
  fs.symlinkSync(outside, path.join(root, "escape-dir"))
  fs.symlinkSync(path.join(outside, "secret.txt"), path.join(root, "escape-file"))
  fs.symlinkSync(path.join(root, "notes"), path.join(root, "inner-link"))
  fs.symlinkSync(path.join(base, "nowhere"), path.join(root, "dangling"))
  const realRoot = fs.realpathSync(root)
  afterAll(() => fs.rmSync(base, { recursive: true, force: true }))

  it("answers existing and new paths inside", () => {
    expect(resolveInside(realRoot, ["notes", "todo.md"])).toEqual(Either.right(path.join(realRoot, "notes", "todo.md")))
    expect(resolveInside(realRoot, ["new", "deep", "file.md"])).toEqual(Either.right(path.join(realRoot, "new", "deep", "file.md")))
  })

  it("follows a symlink that stays inside", () => {
    expect(resolveInside(realRoot, ["inner-link", "todo.md"])).toEqual(Either.right(path.join(realRoot, "notes", "todo.md")))
  })

  it("refuses symlinks that lead outside, to a directory or a file, and dangling ones", () => {
    expect(resolveInside(realRoot, ["escape-dir", "secret.txt"])).toEqual(Either.left("path resolves outside the workspace"))
    expect(resolveInside(realRoot, ["escape-dir", "new.txt"])).toEqual(Either.left("path resolves outside the workspace"))
    expect(resolveInside(realRoot, ["escape-file"])).toEqual(Either.left("path resolves outside the workspace"))
    expect(Either.isLeft(resolveInside(realRoot, ["dangling"]))).toBe(true)
  })

  it("refuses a path through a file", () => {
    expect(resolveInside(realRoot, ["notes", "todo.md", "x"])).toEqual(Either.left("a parent of the path is a file"))
  })
})
