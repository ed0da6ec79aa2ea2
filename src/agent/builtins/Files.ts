/**
 * The workspace file tools of the turn's channel: list, read (line ranges, size cap), write, append
 * and search. Every path goes through the workspace service, so its rules hold (traversal and
 * links out of the workspace are refused, as over HTTP).
 */
import { Effect, Schema } from "effect"
import type { ToolCallContext } from "../../sdk/index.ts"
import { Workspaces } from "../../workspaces/Workspaces.ts"
import { CountArgument, declareTool, FlagArgument, NonBlankArgument, ToolFailure } from "../Tool.ts"

/** What one read gives the model at most; it asks for the next lines when it wants more. */
export const readCapChars = 20_000
const maxSearchHits = 100
const maxSearchedBytes = 1024 * 1024

const channelOf = (context: ToolCallContext) =>
  context.channelId
    ? Effect.succeed(context.channelId)
    : new ToolFailure({ message: "This conversation has no channel, so it has no workspace" })

const PathArgument = Schema.String.annotations({ description: "Path inside the workspace, '/' between segments (e.g. notes/todo.md)" })
const FolderArgument = Schema.optional(Schema.String.annotations({ description: "Only files under this folder" }))
const LineArgument = Schema.optional(CountArgument({ min: 1, max: Number.MAX_SAFE_INTEGER }))

/** A folder argument as a prefix: no slashes at either end, "" for the whole workspace. */
const folderOf = (folder: string | undefined) => (folder ?? "").replace(/^\/+|\/+$/g, "")

export const fileTools = Effect.gen(function*() {
  const workspaces = yield* Workspaces

  const listFiles = yield* declareTool({
    name: "list_files",
    description: "List the files of this channel's workspace (path and size), optionally only those under a folder.",
    effect: "read",
    parameters: Schema.Struct({ folder: FolderArgument }),
    success: Schema.String,
    handler: (args, context) =>
      Effect.gen(function*() {
        const listing = yield* workspaces.list(yield* channelOf(context))
        const folder = folderOf(args.folder)
        const files = listing.files.filter((file) => !folder || file.path.startsWith(`${folder}/`))
        if (files.length === 0) return folder ? `No files under ${folder}/.` : "The workspace is empty."
        return [...files.map((file) => `${file.path} (${file.size} bytes)`), ...(listing.truncated ? ["(more files not listed)"] : [])]
          .join("\n")
      })
  })

  const readFile = yield* declareTool({
    name: "read_file",
    description:
      `Read a text file of the workspace, whole or lines start_line..end_line (1-based, inclusive). At most ${readCapChars} characters are returned at once.`,
    effect: "read",
    parameters: Schema.Struct({ path: PathArgument, start_line: LineArgument, end_line: LineArgument }),
    success: Schema.String,
    handler: (args, context) =>
      Effect.gen(function*() {
        const file = yield* workspaces.read(yield* channelOf(context), args.path)
        if (file.encoding !== "utf8") return yield* new ToolFailure({ message: `${file.path} is not a text file (${file.size} bytes)` })
        const lines = file.content.split("\n")
        const start = Math.min(args.start_line ?? 1, lines.length)
        const end = Math.min(args.end_line ?? lines.length, lines.length)
        const selected = lines.slice(start - 1, Math.max(start, end)).join("\n")
        if (selected.length <= readCapChars) return selected
        const shown = selected.slice(0, readCapChars)
        const lastLine = start + shown.split("\n").length - 1
        return `${shown}\n[Cut at ${readCapChars} characters, in line ${lastLine} of ${lines.length}: read on with start_line=${lastLine}]`
      })
  })

  const writeFile = yield* declareTool({
    name: "write_file",
    description: "Write a text file in the workspace (making its folders), replacing it if it exists.",
    effect: "write",
    parameters: Schema.Struct({ path: PathArgument, content: Schema.String }),
    success: Schema.String,
    handler: (args, context) =>
      Effect.gen(function*() {
        const written = yield* workspaces.write(yield* channelOf(context), args.path, args.content)
        return `${written.created ? "Created" : "Replaced"} ${written.path} (${written.size} bytes)`
      })
  })

  const appendFile = yield* declareTool({
    name: "append_file",
    description: "Append text to a file of the workspace, creating it when missing.",
    effect: "write",
    parameters: Schema.Struct({ path: PathArgument, content: Schema.String }),
    success: Schema.String,
    handler: (args, context) =>
      Effect.gen(function*() {
        const channelId = yield* channelOf(context)
        const filePath = args.path
        const before = yield* workspaces.read(channelId, filePath).pipe(
          Effect.map((file) => (file.encoding === "utf8" ? file.content : null)),
          Effect.catchTag("WorkspaceFileNotFound", () => Effect.succeed(""))
        )
        if (before === null) return yield* new ToolFailure({ message: `${filePath} is not a text file; cannot append to it` })
        const written = yield* workspaces.write(channelId, filePath, before + args.content)
        return `Appended to ${written.path} (now ${written.size} bytes)`
      })
  })

  const searchFiles = yield* declareTool({
    name: "search_files",
    description:
      `Search the workspace's text files for a substring (or a regular expression with regex: true); answers path:line: text, at most ${maxSearchHits} lines.`,
    effect: "read",
    parameters: Schema.Struct({
      query: NonBlankArgument(),
      regex: Schema.optional(FlagArgument("Treat query as a JavaScript regular expression")),
      folder: FolderArgument
    }),
    success: Schema.String,
    handler: (args, context) =>
      Effect.gen(function*() {
        const channelId = yield* channelOf(context)
        const query = args.query
        const matches = yield* Effect.try({
          try: () => {
            const pattern = args.regex === true ? new RegExp(query, "i") : null
            const needle = query.toLowerCase()
            return (line: string) => (pattern ? pattern.test(line) : line.toLowerCase().includes(needle))
          },
          catch: (error) => new ToolFailure({ message: `Not a valid regular expression: ${(error as Error).message}` })
        })
        const folder = folderOf(args.folder)
        const listing = yield* workspaces.list(channelId)
        const hits: Array<string> = []
        for (const info of listing.files) {
          if (hits.length >= maxSearchHits) break
          if ((folder && !info.path.startsWith(`${folder}/`)) || info.size > maxSearchedBytes) continue
          const file = yield* Effect.option(workspaces.read(channelId, info.path))
          if (file._tag === "None" || file.value.encoding !== "utf8") continue
          for (const [index, line] of file.value.content.split("\n").entries()) {
            if (matches(line)) hits.push(`${info.path}:${index + 1}: ${line.slice(0, 300)}`)
            if (hits.length >= maxSearchHits) break
          }
        }
        return hits.length === 0 ? `No line matches ${JSON.stringify(query)}.` : hits.join("\n")
      })
  })

  return [listFiles, readFile, writeFile, appendFile, searchFiles]
})
