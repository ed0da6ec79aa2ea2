/**
 * `cairn --help` and `--version`, written like gh's: one line per command and flag, examples,
 * wrapped at word boundaries to the terminal's width, bold headings only on a terminal without
 * `NO_COLOR`. It imports nothing, so bin/cairn.mjs answers help and the version from the tree the
 * build saved (dist/server/help.json) without loading Effect, the client or the server.
 */

export interface HelpFlag {
  /** `--url`, with its aliases (`-o`) beside it. */
  readonly names: ReadonlyArray<string>
  /** `<text>`, `<integer>`, … (absent for a boolean flag). */
  readonly value?: string
  readonly description: string
}

export interface HelpArgument {
  readonly name: string
  readonly description: string
}

export interface HelpCommand {
  readonly name: string
  readonly description: string
  readonly usage: string
  readonly arguments: ReadonlyArray<HelpArgument>
  readonly flags: ReadonlyArray<HelpFlag>
  readonly commands: ReadonlyArray<HelpCommand>
  readonly examples: ReadonlyArray<string>
}

export interface HelpTree {
  readonly version: string
  readonly root: HelpCommand
}

/** What the command line asks of help: nothing, the version, or the help of a command path. */
export type HelpRequest =
  | { readonly _tag: "Version" }
  | { readonly _tag: "Help"; readonly path: ReadonlyArray<string> }

const helpFlags = new Set(["--help", "-h"])

export const helpRequest = (argv: ReadonlyArray<string>): HelpRequest | undefined => {
  if (argv.length === 0) return { _tag: "Help", path: [] }
  if (argv.length === 1 && argv[0] === "--version") return { _tag: "Version" }
  if (argv[0] === "help") return { _tag: "Help", path: argv.slice(1).filter((word) => !word.startsWith("-")) }
  const end = argv.indexOf("--")
  const flags = end === -1 ? argv : argv.slice(0, end)
  if (!flags.some((word) => helpFlags.has(word))) return undefined
  const firstFlag = flags.findIndex((word) => word.startsWith("-"))
  return { _tag: "Help", path: flags.slice(0, firstFlag === -1 ? flags.length : firstFlag) }
}

/**
 * The command a path names; words past a command without subcommands are its arguments. An unknown
 * subcommand is named, so the caller can say so.
 */
export const findCommand = (root: HelpCommand, path: ReadonlyArray<string>) => {
  let command = root
  const trail = [root.name]
  for (const word of path) {
    if (command.commands.length === 0) break
    const next = command.commands.find((child) => child.name === word)
    if (next === undefined) return { _tag: "Unknown" as const, word, trail }
    command = next
    trail.push(word)
  }
  return { _tag: "Found" as const, command, trail }
}

/** Words of `text` in lines of at most `width` characters (a longer word keeps its own line, uncut). */
export const wrap = (text: string, width: number): Array<string> => {
  const lines: Array<string> = []
  for (const paragraph of text.split("\n")) {
    let line = ""
    for (const word of paragraph.split(/\s+/).filter((word) => word.length > 0)) {
      if (line.length === 0) line = word
      else if (line.length + 1 + word.length <= width) line += ` ${word}`
      else {
        lines.push(line)
        line = word
      }
    }
    lines.push(line)
  }
  return lines
}

/** Terms and their descriptions in two columns, each description wrapped under its own column. */
const definitions = (rows: ReadonlyArray<readonly [string, string]>, width: number) => {
  const termWidth = Math.min(Math.max(...rows.map(([term]) => term.length)), Math.floor(width / 3))
  const indent = 2 + termWidth + 3
  return rows.flatMap(([term, text]) => {
    const lines = wrap(text, Math.max(20, width - indent))
    // A term longer than its column puts the description on the lines below it.
    if (term.length > termWidth) return [`  ${term}`, ...lines.map((line) => `${" ".repeat(indent)}${line}`)]
    return lines.map((line, i) => (i === 0 ? `  ${term.padEnd(termWidth)}   ${line}` : `${" ".repeat(indent)}${line}`))
  })
}

export interface RenderOptions {
  readonly width: number
  readonly colour: boolean
}

const globalFlags: ReadonlyArray<HelpFlag> = [{ names: ["--help", "-h"], description: "Show help for a command" }]

export const renderHelp = (tree: HelpTree, trail: ReadonlyArray<string>, command: HelpCommand, options: RenderOptions) => {
  const width = Math.max(40, options.width)
  const heading = (text: string) => (options.colour ? `\u001b[1m${text}\u001b[22m` : text)
  const section = (title: string, lines: ReadonlyArray<string>) => (lines.length === 0 ? [] : ["", heading(title), ...lines])
  const name = trail.join(" ")
  const isRoot = trail.length === 1
  const flag = (f: HelpFlag) => [`${f.names.join(", ")}${f.value ? ` ${f.value}` : ""}`, f.description] as const
  const lines = [
    ...wrap(command.description, width),
    ...section("USAGE", [`  ${name}${command.usage ? ` ${command.usage}` : ""}`]),
    ...section("COMMANDS", definitions(command.commands.map((child) => [`${child.name}:`, child.description] as const), width)),
    ...section("ARGUMENTS", definitions(command.arguments.map((arg) => [arg.name, arg.description] as const), width)),
    ...section("FLAGS", definitions(command.flags.map(flag), width)),
    ...section(
      isRoot ? "GLOBAL FLAGS" : "INHERITED FLAGS",
      definitions(
        (isRoot ? [...globalFlags, { names: ["--version"], description: `Show cairn's version (${tree.version})` }] : globalFlags).map(
          flag
        ),
        width
      )
    ),
    ...section("EXAMPLES", command.examples.map((example) => `  $ ${example}`)),
    ...section("LEARN MORE", [
      ...(command.commands.length > 0
        ? wrap(`Use \`${name} <command> --help\` for more about a command.`, width - 2).map((l) => `  ${l}`)
        : []),
      ...wrap("Exit codes: 0 done, 1 failed, 2 a usage error. docs/cli.md has the manual.", width - 2).map((l) => `  ${l}`)
    ])
  ]
  return `${lines.map((line) => line.trimEnd()).join("\n")}\n`
}

/**
 * Answers a help or version request on `out`: the exit code, or undefined when the command line
 * asks for neither (the command runs).
 */
export const answerHelp = (
  tree: HelpTree,
  argv: ReadonlyArray<string>,
  io: { readonly out: (text: string) => void; readonly err: (text: string) => void } & RenderOptions
): number | undefined => {
  const request = helpRequest(argv)
  if (request === undefined) return undefined
  if (request._tag === "Version") {
    io.out(`cairn version ${tree.version}\n`)
    return 0
  }
  const found = findCommand(tree.root, request.path)
  if (found._tag === "Unknown") {
    io.err(
      `cairn: unknown command "${found.word}" for "${found.trail.join(" ")}"\n\nUse \`${found.trail.join(" ")} --help\` for its commands.\n`
    )
    return 2
  }
  io.out(renderHelp(tree, found.trail, found.command, io))
  return 0
}

/** The terminal's width and whether to colour, for standard output as it is now. */
export const stdoutRendering = (): RenderOptions => ({
  width: process.stdout.isTTY && process.stdout.columns ? process.stdout.columns : 80,
  colour: process.stdout.isTTY === true && !(process.env.NO_COLOR !== undefined && process.env.NO_COLOR !== "")
})
