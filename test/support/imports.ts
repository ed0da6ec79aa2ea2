/**
 * The source tree's import graph, read from the files as text: what the architecture tests check
 * (folder cycles, the contract's import closure, the integration boundary).
 */
import * as fs from "node:fs"
import * as path from "node:path"

export const root = path.resolve(import.meta.dirname, "../..")

/** Every source file below a directory (`pattern`: which names count; the import graph's by default). */
export const sourceFiles = (dir: string, pattern = /\.(ts|mts|js|mjs)$/): Array<string> =>
  fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name)
    if (entry.isDirectory()) return entry.name === "node_modules" ? [] : sourceFiles(full, pattern)
    return pattern.test(entry.name) ? [full] : []
  })

/** Every module specifier a file imports (static, dynamic, type-only and re-exports). */
export const importsOf = (source: string): Array<string> =>
  [...source.matchAll(/(?:import|export)\s[^'"]*?from\s*["']([^"']+)["']|import\s*\(\s*["']([^"']+)["']\s*\)|import\s+["']([^"']+)["']/g)]
    .map(
      (m) => m[1] ?? m[2] ?? m[3]!
    )

/** A relative specifier as an absolute file path; a package specifier as its package name. */
export const resolveImport = (from: string, specifier: string): { readonly file: string } | { readonly pkg: string } => {
  if (specifier.startsWith(".")) return { file: path.resolve(path.dirname(from), specifier) }
  const parts = specifier.split("/")
  return { pkg: specifier.startsWith("@") ? parts.slice(0, 2).join("/") : parts[0]! }
}

/** Files and packages reachable from the entry files by following imports. */
export const closure = (entries: ReadonlyArray<string>, read: (file: string) => string = (f) => fs.readFileSync(f, "utf8")) => {
  const files = new Set<string>()
  const packages = new Map<string, string>()
  const visit = (file: string) => {
    if (files.has(file)) return
    files.add(file)
    for (const specifier of importsOf(read(file))) {
      const target = resolveImport(file, specifier)
      if ("file" in target) visit(target.file)
      else if (!packages.has(target.pkg)) packages.set(target.pkg, path.relative(root, file))
    }
  }
  entries.forEach(visit)
  return { files, packages }
}

/** The folder of `src/` a file belongs to (its first path segment below `src/`), or null for a top-level file. */
export const folderOf = (srcDir: string, file: string): string | null => {
  const relative = path.relative(srcDir, file).split(path.sep)
  return relative.length > 1 ? relative[0]! : null
}

/** Edges between the top-level folders of a source directory, each with one import that makes it. */
export const folderGraph = (srcDir: string, read: (file: string) => string = (f) => fs.readFileSync(f, "utf8")) => {
  const edges = new Map<string, Map<string, string>>()
  for (const file of sourceFiles(srcDir)) {
    const from = folderOf(srcDir, file)
    if (from === null) continue
    for (const specifier of importsOf(read(file))) {
      const target = resolveImport(file, specifier)
      if (!("file" in target)) continue
      const to = folderOf(srcDir, target.file)
      if (to === null || to === from || target.file.startsWith("..")) continue
      const out = edges.get(from) ?? new Map<string, string>()
      if (!out.has(to)) out.set(to, `${path.relative(srcDir, file)} imports ${specifier}`)
      edges.set(from, out)
    }
  }
  return edges
}

/** Strongly connected components with more than one node (Tarjan): each is a cycle of folders. */
export const cycles = (edges: ReadonlyMap<string, ReadonlyMap<string, string>>): Array<Array<string>> => {
  const index = new Map<string, number>()
  const low = new Map<string, number>()
  const stack: Array<string> = []
  const onStack = new Set<string>()
  const found: Array<Array<string>> = []
  let next = 0
  const connect = (node: string) => {
    index.set(node, next)
    low.set(node, next)
    next++
    stack.push(node)
    onStack.add(node)
    for (const to of edges.get(node)?.keys() ?? []) {
      if (!index.has(to)) {
        connect(to)
        low.set(node, Math.min(low.get(node)!, low.get(to)!))
      } else if (onStack.has(to)) low.set(node, Math.min(low.get(node)!, index.get(to)!))
    }
    if (low.get(node) === index.get(node)) {
      const component: Array<string> = []
      let member: string
      do {
        member = stack.pop()!
        onStack.delete(member)
        component.push(member)
      } while (member !== node)
      if (component.length > 1) found.push(component.sort())
    }
  }
  for (const node of edges.keys()) if (!index.has(node)) connect(node)
  return found
}
