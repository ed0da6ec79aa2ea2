/**
 * The docs against the tree they describe, both read as they are when the test runs:
 * - the folder map of `docs/architecture.md` ("The folders of `src/`") has a row for every folder
 *   of `src/`, and each row names a folder (or file) that exists;
 * - every name of ours that `docs/**` writes in backticks exists: a path names a file or folder of
 *   the checkout, an identifier (`fooBar`, `SomeService`, `Intake.answer`) is declared somewhere in
 *   src/, integrations/, test/, bench/ or bin/ (or is a package.json script), and an API field in
 *   snake_case (`dispatch_config`) appears in src/ or integrations/.
 * - the dependency levels of `docs/architecture.md` list every folder of `src/` once, and each
 *   folder imports only from lower levels (the import graph of test/core/architecture.test.ts).
 * What is not ours is left alone: env vars and constants (ALL_CAPS), HTTP paths, shell commands,
 * shapes, package names, MIME types, names whose head comes from a package the code imports
 * (`Effect.fn`, `Layer.scopedDiscard`, `PgClient.fromPool`) or is a JavaScript global (`Error`),
 * and the few in `notOurs`.
 * Each check has a probe: the same check over a text with a made-up name, which must be found.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "vitest"
import { folderGraph, root } from "../support/imports.ts"

const srcDir = path.join(root, "src")
const docsDir = path.join(root, "docs")
const read = (file: string) => fs.readFileSync(file, "utf8")
/** What is not the checkout's: packages, git, and the build and runtime folders at its top. */
const skipped = (dir: string, name: string) =>
  name === "node_modules" || name === ".git" || (dir === root && (/^(?:dist|data|coverage)$/.test(name) || name.startsWith(".")))

/** Every file below a directory (relative to the checkout). */
const filesBelow = (dir: string): Array<string> =>
  fs.existsSync(dir)
    ? fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
      if (skipped(dir, entry.name)) return []
      const full = path.join(dir, entry.name)
      return entry.isDirectory() ? filesBelow(full) : [path.relative(root, full)]
    })
    : []

const subfolders = (dir: string) =>
  fs
    .readdirSync(dir, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name)

// --- the folder map ------------------------------------------------------------------------------

/** The folder map: the code block of "The folders of `src/`", and the line of the doc it starts after. */
export const folderMap = (doc: string): { readonly text: string; readonly line: number } => {
  const heading = /^## The folders of `src\/`\s*$/m.exec(doc)
  if (heading === null) throw new Error("docs/architecture.md has no section \"The folders of `src/`\"")
  const fence = /^```[^\n]*\n([\s\S]*?)^```/m.exec(doc.slice(heading.index))
  if (fence === null) throw new Error("the folder map's code block is missing")
  return { text: fence[1]!, line: doc.slice(0, heading.index + fence.index).split("\n").length }
}

/** The names in the first column of the folder map: each row's leading `name/` and `file.ts` words. */
export const folderMapNames = (doc: string): Array<string> =>
  folderMap(doc)
    .text.split("\n")
    .filter((line) => /^ {2}\S/.test(line))
    .flatMap((line) => line.trim().split(/\s{2,}/)[0]!.split(" "))

/** What the folder map gets wrong about a tree whose `src/` holds these folders and files. */
export const folderMapProblems = (doc: string, folders: ReadonlyArray<string>, files: ReadonlyArray<string>): Array<string> => {
  const names = folderMapNames(doc)
  const rows = new Set(names.filter((name) => name.endsWith("/")).map((name) => name.slice(0, -1)))
  return [
    ...folders.filter((folder) => !rows.has(folder)).map((folder) => `src/${folder}/ has no row`),
    ...[...rows].filter((row) => !folders.includes(row)).map((row) => `row ${row}/ names no folder of src/`),
    ...names.filter((name) => !name.endsWith("/") && !files.includes(name)).map((name) => `row ${name} names no file of src/`)
  ]
}

// --- the dependency levels ----------------------------------------------------------------------

/** The levels of "Dependency direction": each folder's level, from the code block's `N  name  name` lines. */
export const levelsOf = (doc: string): Map<string, number> => {
  const section = doc.split(/^### Dependency direction\s*$/m)[1]
  const block = section && /^```[^\n]*\n([\s\S]*?)^```/m.exec(section)?.[1]
  if (!block) throw new Error("docs/architecture.md has no level list under \"Dependency direction\"")
  const levels = new Map<string, number>()
  for (const [, level, names] of block.matchAll(/^(\d+)\s+([^(\n]*)/gm)) {
    for (const name of names!.trim().split(/\s+/)) {
      if (levels.has(name)) throw new Error(`${name} is listed at two levels`)
      levels.set(name, Number(level))
    }
  }
  return levels
}

/** What the level list gets wrong about a tree with these folders and these imports between them. */
export const levelProblems = (doc: string, folders: ReadonlyArray<string>, edges: ReturnType<typeof folderGraph>): Array<string> => {
  const levels = levelsOf(doc)
  return [
    ...folders.filter((folder) => !levels.has(folder)).map((folder) => `${folder} has no level`),
    ...[...levels.keys()].filter((name) => !folders.includes(name)).map((name) => `${name} is no folder of src/`),
    ...[...edges].flatMap(([from, targets]) =>
      [...targets]
        .filter(([to]) => levels.has(from) && levels.has(to) && levels.get(to)! >= levels.get(from)!)
        .map(([to, via]) => `${from} (${levels.get(from)}) imports ${to} (${levels.get(to)}): ${via}`)
    )
  ]
}

// --- the names in backticks ----------------------------------------------------------------------

export interface Span {
  readonly text: string
  readonly line: number
}

/** The inline code spans of a markdown text (fenced blocks left out), each with its line. */
export const codeSpans = (markdown: string): Array<Span> => {
  let fenced = false
  const prose = markdown
    .split("\n")
    .map((line) => {
      if (/^\s*(```|~~~)/.test(line)) {
        fenced = !fenced
        return ""
      }
      return fenced ? "" : line
    })
    .join("\n")
  return [...prose.matchAll(/(?<!`)(`+)(?!`)((?:(?!\n\n)[\s\S])+?)(?<!`)\1(?!`)/g)].map((match) => ({
    text: match[2]!.replace(/\s*\n\s*/g, " ").trim(),
    line: prose.slice(0, match.index).split("\n").length
  }))
}

/**
 * What a name must be to be true: a path of the checkout; an identifier declared in the code; a
 * snake_case API name that src/ or integrations/ writes; a capitalised word (a class, or a label
 * the code writes in any case, like `Ready`) that the code writes.
 */
export type Claim =
  | { readonly kind: "path"; readonly name: string }
  | { readonly kind: "declared"; readonly name: string }
  | { readonly kind: "mentioned"; readonly name: string }
  | { readonly kind: "word"; readonly name: string }

/**
 * Names that look like ours and are not, each with whose it is. Keep it short: a name under a
 * package the code imports (`Effect.`, `Schema.`, `HttpApiBuilder.`) is known as external already.
 */
export const notOurs: ReadonlyMap<string, string> = new Map([
  ["HttpOnly", "a cookie attribute"],
  ["pipe", "the pipe method of every Effect value"],
  ["APIError", "the OpenAI SDKs' error class"],
  ["targetOrigin", "window.postMessage's parameter"],
  ["top_p", "an OpenAI request field Cairn ignores"],
  ["client_max_body_size", "an nginx directive"],
  ["rewriteRelativeImportExtensions", "a TypeScript compiler option"],
  ["synchronous_standby_names", "a PostgreSQL setting"],
  ["server_login_retry", "a PgBouncer setting"],
  ["integrations/example/example-usage", "a skill's id (integrations/<id>/<stem>), not a path"]
])

const identifier = /^[A-Za-z_$][\w$]*$/
const allCaps = /^[A-Z][A-Z0-9_]*$/
const snakeCase = /^[a-z][a-z0-9]*(?:_[a-z0-9]*[a-z][a-z0-9]*)+$/
const camelCase = /^[a-z][a-z0-9]*[A-Z][A-Za-z0-9]*$/
const pascalCase = /^[A-Z][a-z0-9]*[A-Z][A-Za-z0-9]*$/
const capitalised = /^[A-Z][a-z0-9]+$/
/** An example file of a user's (`cat.png`), not one of the checkout. */
const dataFile = /^[\w-]+\.(?:png|jpe?g|gif|webp|pdf|txt|csv|wav|mp3|m4a|ogg|jsonl|tar|gz|zip)$/
const codeFile = /\.(?:ts|tsx|mts|mjs|js|json|sql|md|yaml|yml|css|html)$/

/** What one word of a name claims, if it looks like code of ours. */
const wordClaim = (word: string): Claim | undefined =>
  notOurs.has(word) || allCaps.test(word)
    ? undefined
    : snakeCase.test(word)
    ? { kind: "mentioned", name: word }
    : camelCase.test(word) || pascalCase.test(word)
    ? { kind: "declared", name: word }
    : capitalised.test(word)
    ? { kind: "word", name: word }
    : undefined

export interface Context {
  /** Top-level entries of the checkout and folders of src/, which a path may start with. */
  readonly roots: ReadonlySet<string>
  readonly srcFolders: ReadonlySet<string>
  /** Names imported from packages, and JavaScript's globals: a name under one (`Effect.fn`) is not ours. */
  readonly external: (name: string) => boolean
  /** JavaScript's globals (`Error`, `Date`). */
  readonly global: (name: string) => boolean
}

/** A path's claim, if it names a file, or a folder of the checkout or of src/ (not `image/png`, `openai/gpt-4o`, `data/`). */
const pathClaims = (text: string, context: Context): Array<Claim> => {
  // `src/web/app/{tasks,documents}/`: each of the paths
  const braces = /\{([\w.,-]+)\}/.exec(text)
  if (braces) return braces[1]!.split(",").flatMap((part) => pathClaims(text.replace(braces[0], part), context))
  if (/[\s<>{}*…|=%:?$~]/.test(text) || /^\.[^./]/.test(text)) return []
  const relative = text.replace(/^(?:\.\.?\/)+/, "")
  const segments = relative.replace(/\/$/, "").split("/")
  const first = segments[0]!
  const file = codeFile.test(relative)
  const folder = (context.roots.has(first) || context.srcFolders.has(first)) &&
    segments.every((segment) => /^[\w.-]+$/.test(segment) && !/^\d|-\d/.test(segment))
  return relative !== "" && (file || folder) ? [{ kind: "path", name: relative }] : []
}

/** The claims a code span makes, or none when it is not a name of ours. */
export const claimsOf = (span: string, context: Context): Array<Claim> => {
  if (notOurs.has(span)) return []
  if ((span.includes("/") || codeFile.test(span)) && !/^[a-z]+:/i.test(span) && !/^\//.test(span) && !/\s/.test(span)) {
    return pathClaims(span, context)
  }
  // a call: its callee, and the names of ours among its arguments (`settings.get(SystemPaused)`)
  const call = /^([A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*)\((.*)\)$/s.exec(span)
  const text = (call ? call[1]! : span).replace(/(?:\?|\[\])$/, "")
  const argumentClaims = call
    ? [...call[2]!.replace(/"[^"]*"|'[^']*'/g, "").matchAll(/(?<![\w$.])[A-Za-z_$][\w$]*/g)]
      .map(([word]) => word)
      .filter((word) => (camelCase.test(word) || pascalCase.test(word)) && !notOurs.has(word) && !context.global(word))
      .map((word): Claim => ({ kind: "declared", name: word }))
    : []
  const segments = text.split(".")
  if (dataFile.test(text)) return argumentClaims
  if (!segments.every((segment) => identifier.test(segment)) || notOurs.has(text)) return argumentClaims
  const [head, ...members] = segments as [string, ...Array<string>]
  if (members.length > 0 ? context.external(head) : context.global(head)) return argumentClaims
  // a service or namespace of ours (`Intake.answer`) is declared; a variable (`bus`, `cairn`) is not checked
  const headClaim: Claim | undefined = members.length > 0 && capitalised.test(head)
    ? { kind: "declared", name: head }
    : call && members.length === 0 && /^[a-z]\w*$/.test(head)
    ? { kind: "declared", name: head }
    : wordClaim(head)
  // a member is declared (`answer`, `awaitSome`), unless the name is a host (`imap.gmail.com`)
  const host = members.length > 0 && /^(?:com|org|net|io|dev)$/.test(members.at(-1)!)
  const memberClaims = host
    ? []
    : members.map((member) =>
      wordClaim(member) ?? (/^[a-z]\w*$/.test(member) && !notOurs.has(member) ? ({ kind: "declared", name: member } as const) : undefined)
    )
  return [headClaim, ...memberClaims, ...argumentClaims].filter((claim): claim is Claim => claim !== undefined)
}

export interface Tree {
  /** Whether a path (of the checkout, of src/, or ending a file's path) exists, or a file name is one the code reads. */
  readonly exists: (name: string) => boolean
  /** Names declared in the code: bindings, types, classes, keys and members, package.json scripts. */
  readonly declared: ReadonlySet<string>
  /** Every word of the code of src/ and integrations/. */
  readonly words: ReadonlySet<string>
}

export const holds = (claim: Claim, tree: Tree): boolean => {
  switch (claim.kind) {
    case "path":
      return tree.exists(claim.name)
    case "declared":
      return tree.declared.has(claim.name)
    case "mentioned":
      return tree.words.has(claim.name)
    case "word":
      return tree.declared.has(claim.name) || tree.words.has(claim.name) || tree.words.has(claim.name.toLowerCase())
  }
}

/** The names in a markdown text that the tree does not hold, as `line: \`name\``. */
export const missingNames = (markdown: string, context: Context, tree: Tree): Array<string> =>
  codeSpans(markdown).flatMap(({ line, text }) =>
    claimsOf(text, context)
      .filter((claim) => !holds(claim, tree))
      .map((claim) => `${line}: \`${claim.name}\`${claim.name === text ? "" : ` (in \`${text}\`)`}`)
  )

const codeExtensions = /\.(?:ts|tsx|mts|cts|mjs|cjs|js)$/
/** Comment lines (line comments and JSDoc lines) out, so a name only a comment still mentions is not declared. */
const withoutCommentLines = (source: string) => source.replace(/^\s*(?:\/\/|\/\*|\*).*$/gm, "")

const declarationPatterns = [
  /\b(?:const|let|var|function\*?|class|interface|type|enum|namespace)\s+([A-Za-z_$][\w$]*)/g,
  // keys, members, parameters and calls: `name:`, `name?:`, `name(`, `name =`
  /(?<![\w$.])([A-Za-z_$][\w$]*)\??\s*(?=[:(]|=(?![=>]))/g,
  /["']([A-Za-z_$][\w$]*)["']\s*:/g,
  // shorthand keys, destructuring, import and export lists: `{ name, other }`
  /(?<=[{,]\s*)([A-Za-z_$][\w$]*)(?=\s*[,}])/g,
  /\bas\s+([A-Za-z_$][\w$]*)/g
]

const packageImports = /import\s+(?:type\s+)?(?:([\w$]+)\s*,?\s*)?(?:\{([^}]*)\}|\*\s+as\s+([\w$]+))?\s*from\s*["']([^."'][^"']*)["']/g

export const readTree = (): { readonly context: Context; readonly tree: Tree } => {
  const files = ["src", "integrations", "test", "bench", "bin", "migrations"].flatMap((dir) => filesBelow(path.join(root, dir)))
  const declared = new Set<string>()
  const words = new Set<string>()
  const imported = new Set<string>()
  for (const file of files) {
    const source = read(path.join(root, file))
    if (codeExtensions.test(file)) {
      const code = withoutCommentLines(source)
      for (const pattern of declarationPatterns) for (const match of code.matchAll(pattern)) declared.add(match[1]!)
      for (const match of code.matchAll(packageImports)) {
        const [, defaultName, list, namespace] = match
        for (
          const name of [
            defaultName,
            namespace,
            ...(list ?? "").split(",").flatMap((item) => item.replace(/^\s*type\s+/, "").split(/\s+as\s+/))
          ]
        ) {
          const trimmed = name?.trim()
          if (trimmed) imported.add(trimmed)
        }
      }
    }
    if (/^(?:src|integrations)\//.test(file) && codeExtensions.test(file)) {
      for (const word of source.match(/[A-Za-z_$][\w$]*/g) ?? []) words.add(word)
    }
  }
  const scripts = (JSON.parse(read(path.join(root, "package.json"))) as { scripts?: Record<string, string> }).scripts ?? {}
  for (const script of Object.keys(scripts)) declared.add(script)

  const fileList = filesBelow(root)
  // a bare file name may be one the code or the bundled content reads or writes (`process.ts`, a template's `triage.md`)
  const content = ["src", "integrations", "workspace-templates", "bots", "carapaces", "skills", "workflows"]
    .flatMap((dir) => filesBelow(path.join(root, dir)))
    .map((file) => read(path.join(root, file)))
  const exists = (name: string) => {
    const clean = name.replace(/\/$/, "")
    return (
      fs.existsSync(path.join(root, clean)) ||
      fs.existsSync(path.join(srcDir, clean)) ||
      fileList.some((file) => file.endsWith(`/${clean}`) || file.includes(`/${clean}/`)) ||
      (!clean.includes("/") && content.some((text) => text.includes(clean)))
    )
  }
  const globals = new Set(Object.getOwnPropertyNames(globalThis))
  return {
    context: {
      roots: new Set(fs.readdirSync(root).filter((entry) => !skipped(root, entry))),
      srcFolders: new Set(subfolders(srcDir)),
      external: (name) => imported.has(name) || globals.has(name),
      global: (name) => globals.has(name)
    },
    tree: { exists, declared, words }
  }
}

const docFiles = filesBelow(docsDir).filter((file) => file.endsWith(".md"))

describe("the folder map of docs/architecture.md", () => {
  const doc = read(path.join(docsDir, "architecture.md"))
  const folders = subfolders(srcDir)
  const files = fs.readdirSync(srcDir).filter((entry) => !folders.includes(entry))

  it("has a row for every folder of src/, and names only folders and files that exist", () => {
    expect(folderMapNames(doc).length).toBeGreaterThan(20)
    expect(folderMapProblems(doc, folders, files)).toEqual([])
  })

  it("names in its descriptions only what exists", () => {
    const { context, tree } = readTree()
    const { line, text } = folderMap(doc)
    expect(codeSpans(text).length).toBeGreaterThan(50)
    // the backticks in the code block mark names as they do in prose; lines counted from the doc's top
    expect(missingNames("\n".repeat(line) + text, context, tree)).toEqual([])
  })

  it("a missing or stale row is found (probe: one row renamed)", () => {
    const probe = doc.replace(/^ {2}speech\/ /m, "  speaking/ ")
    expect(probe).not.toEqual(doc)
    expect(folderMapProblems(probe, folders, files)).toEqual(
      expect.arrayContaining(["src/speech/ has no row", "row speaking/ names no folder of src/"])
    )
  })
})

describe("the dependency levels of docs/architecture.md", () => {
  const doc = read(path.join(docsDir, "architecture.md"))
  const folders = subfolders(srcDir)

  it("list every folder of src/ once, each importing only from lower levels", () => {
    expect(levelProblems(doc, folders, folderGraph(srcDir))).toEqual([])
  })

  it("an import that climbs is found (probe: the configuration importing the database)", () => {
    const file = path.join(srcDir, "config", "AppConfig.ts")
    const probe = (candidate: string) => (candidate === file ? `import "../db/Database.ts"\n${read(candidate)}` : read(candidate))
    expect(levelProblems(doc, folders, folderGraph(srcDir, probe))).toEqual(
      expect.arrayContaining([expect.stringMatching(/^config \(\d+\) imports db \(\d+\): config\/AppConfig\.ts imports/)])
    )
  })
})

describe("the names the docs write in backticks", () => {
  const { context, tree } = readTree()

  it.each(docFiles)("%s names only what exists", (file) => {
    expect(missingNames(read(path.join(root, file)), context, tree)).toEqual([])
  })

  it("reads names of every kind and leaves what is not ours alone", () => {
    const claims = (span: string) => claimsOf(span, context)
    expect(claims("src/db/Bus.ts")).toEqual([{ kind: "path", name: "src/db/Bus.ts" }])
    expect(claims("db/Bus.ts")).toEqual([{ kind: "path", name: "db/Bus.ts" }])
    expect(claims("Intake.answer")).toEqual([
      { kind: "declared", name: "Intake" },
      { kind: "declared", name: "answer" }
    ])
    expect(claims("bus.awaitSome(topic, key, check)")).toEqual([{ kind: "declared", name: "awaitSome" }])
    expect(claims("dispatch_config")).toEqual([{ kind: "mentioned", name: "dispatch_config" }])
    for (
      const notOurs of [
        "Effect.fn",
        "Layer.scopedDiscard",
        "Schema.TaggedError",
        "Error",
        "DATABASE_URL",
        "/api/v1/discover",
        "npm start",
        "@effect/sql",
        "image/png",
        "{path, size}",
        "chat"
      ]
    ) {
      expect(claims(notOurs)).toEqual([])
    }
  })

  it("a name that does not exist is found (probe: made-up names in a doc)", () => {
    const probe = [
      "Retries are named `Schedule`s (`frobnicatePoll` in `src/main.ts`, made with `Effect.fn`).",
      "The `FrobnicatorService` calls `Intake.frobnicate`; see `src/chat/Frobnicate.ts` and the",
      "`frobnicate_mode` field.",
      "",
      "```",
      "`inAFencedBlock` is not prose",
      "```"
    ].join("\n")
    expect(missingNames(probe, context, tree)).toEqual([
      "1: `frobnicatePoll`",
      "2: `FrobnicatorService`",
      "2: `frobnicate` (in `Intake.frobnicate`)",
      "2: `src/chat/Frobnicate.ts`",
      "3: `frobnicate_mode`"
    ])
  })
})
