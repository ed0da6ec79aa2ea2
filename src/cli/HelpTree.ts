/**
 * The help tree of a `@effect/cli` command, read from its descriptor: names, descriptions, flags and
 * arguments as the commands declare them, so help is written from the one definition the parser
 * uses. The build saves it as dist/server/help.json for bin/cairn.mjs's quick answer (src/cli/Help.ts).
 */
import type { HelpArgument, HelpCommand, HelpFlag, HelpTree } from "./Help.ts"

// The descriptor's nodes as @effect/cli builds them (tagged objects); only what help reads.
interface Node {
  readonly _tag: string
  readonly [key: string]: unknown
}

const textOf = (node: unknown): string => {
  if (node === null || typeof node !== "object") return ""
  const n = node as Node
  switch (n._tag) {
    case "Text":
    case "URI":
      return String(n.value)
    case "Highlight":
    case "Strong":
    case "Weak":
    case "Header":
    case "Paragraph":
      return textOf(n.value)
    case "Sequence": {
      const left = textOf(n.left)
      const right = textOf(n.right)
      return left && right ? `${left} ${right}` : left || right
    }
    default:
      return ""
  }
}

const choicesOf = (primitive: Node) =>
  primitive._tag === "Choice" ? (primitive.alternatives as ReadonlyArray<readonly [string, unknown]>).map(([choice]) => choice) : []

const defaultText = (fallback: unknown) => {
  // Options.optional is a default of Option.none(): no default worth showing.
  if (fallback !== null && typeof fallback === "object" && "_tag" in fallback) return undefined
  return fallback === undefined || fallback === false ? undefined : String(fallback)
}

const flagsOf = (options: Node, suffix = ""): Array<HelpFlag> => {
  switch (options._tag) {
    case "Single": {
      const primitive = options.primitiveType as Node
      const choices = choicesOf(primitive)
      const description = [
        textOf(options.description),
        choices.length > 0 ? `(one of: ${choices.join(", ")})` : "",
        suffix
      ].filter((part) => part.length > 0).join(" ")
      return [{
        names: [`--${String(options.name)}`, ...(options.aliases as ReadonlyArray<string>).map((alias) => `-${alias}`)],
        ...(primitive._tag === "Bool" ? {} : { value: `<${String(options.placeholder)}>` }),
        description
      }]
    }
    case "WithDefault": {
      const shown = defaultText(options.fallback)
      return flagsOf(options.options as Node, shown === undefined ? suffix : `(default ${shown})`)
    }
    case "Map":
    case "WithFallback":
      return flagsOf(options.options as Node, suffix)
    case "Both":
    case "OrElse":
      return [...flagsOf(options.left as Node, suffix), ...flagsOf(options.right as Node, suffix)]
    case "Variadic":
    case "KeyValueMap":
      return flagsOf(options.argumentOption as Node, `(repeatable)${suffix ? ` ${suffix}` : ""}`)
    default:
      return []
  }
}

const argumentsOf = (args: Node, shape: { optional: boolean; repeated: boolean } = { optional: false, repeated: false }): Array<
  HelpArgument & { readonly usage: string }
> => {
  switch (args._tag) {
    case "Single": {
      const choices = choicesOf(args.primitiveType as Node)
      const name = String(args.name)
      const usage = `${name}${shape.repeated ? "..." : ""}`
      return [{
        name,
        usage: shape.optional ? `[${usage}]` : usage,
        description: [textOf(args.description), choices.length > 0 ? `(one of: ${choices.join(", ")})` : ""].filter(Boolean).join(" ")
      }]
    }
    case "Variadic":
      return argumentsOf(args.args as Node, {
        optional: shape.optional || (args.min as { _tag: string; value?: number })._tag === "None",
        repeated: true
      })
    case "WithDefault":
      return argumentsOf(args.args as Node, { ...shape, optional: true })
    case "Map":
    case "WithFallbackConfig":
      return argumentsOf(args.args as Node, shape)
    case "Both":
      return [...argumentsOf(args.left as Node, shape), ...argumentsOf(args.right as Node, shape)]
    default:
      return []
  }
}

const commandOf = (
  descriptor: Node,
  examples: Readonly<Record<string, ReadonlyArray<string>>>,
  trail: ReadonlyArray<string>
): HelpCommand => {
  switch (descriptor._tag) {
    case "Map":
      return commandOf(descriptor.command as Node, examples, trail)
    case "Subcommands": {
      const parent = commandOf(descriptor.parent as Node, examples, trail)
      const path = [...trail, parent.name]
      const commands = (descriptor.children as ReadonlyArray<Node>).map((child) => commandOf(child, examples, path))
      return { ...parent, usage: "<command> [flags]", commands }
    }
    default: {
      const name = String(descriptor.name)
      const args = descriptor.args === undefined ? [] : argumentsOf(descriptor.args as Node)
      const flags = descriptor.options === undefined ? [] : flagsOf(descriptor.options as Node)
      return {
        name,
        description: textOf(descriptor.description),
        usage: [...args.map((arg) => arg.usage), ...(flags.length > 0 ? ["[flags]"] : [])].join(" "),
        arguments: args.map(({ description, name }) => ({ name, description })),
        flags,
        commands: [],
        examples: examples[[...trail, name].slice(1).join(" ")] ?? []
      }
    }
  }
}

/** The tree of a `@effect/cli` command, with examples keyed by the command's path without `cairn` (`"docs ingest"`; `""` for the root). */
export const helpTreeOf = (
  command: object,
  version: string,
  examples: Readonly<Record<string, ReadonlyArray<string>>>
): HelpTree => ({ version, root: commandOf((command as unknown as { descriptor: Node }).descriptor, examples, []) })
