/** `cairn docs ingest <files or folders>` (with a progress bar) and `cairn docs search <query>`. */
import { Args, Command, Options } from "@effect/cli"
import { FileSystem, Path } from "@effect/platform"
import { Console, Effect, Option } from "effect"
import { MAX_CONTENT_CHARS } from "../documents/Model.ts"
import { answerCommand, connect, connectionOptions } from "./Connection.ts"
import { clip, columns, describeFailure, inline, jsonOption, printJson, style } from "./Output.ts"
import { makeProgress } from "./Progress.ts"

/** Files under the given paths, folders walked (hidden entries skipped), in a stable order. */
export const filesUnder = (paths: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const found: Array<{ file: string; title: string }> = []
    for (const given of paths) {
      const info = yield* fs.stat(given)
      if (info.type !== "Directory") {
        found.push({ file: given, title: path.basename(given) })
        continue
      }
      const entries = (yield* fs.readDirectory(given, { recursive: true })).sort()
      for (const entry of entries) {
        if (entry.split(path.sep).some((part) => part.startsWith("."))) continue
        const file = path.join(given, entry)
        if ((yield* fs.stat(file)).type === "File") found.push({ file, title: entry })
      }
    }
    return found
  })

/** Text worth storing: no NUL byte (a binary file), not blank, within the server's size. */
export const textOf = (bytes: Uint8Array): { readonly text: string } | { readonly skipped: string } => {
  if (bytes.includes(0)) return { skipped: "not a text file" }
  const text = new TextDecoder("utf-8").decode(bytes)
  if (text.trim().length === 0) return { skipped: "empty" }
  if (text.length > MAX_CONTENT_CHARS) return { skipped: `over ${MAX_CONTENT_CHARS} characters` }
  return { text }
}

const docsIngest = Command.make(
  "ingest",
  {
    ...connectionOptions,
    paths: Args.path({ name: "files or folders", exists: "yes" }).pipe(Args.atLeast(1)),
    integration: Options.text("integration").pipe(
      Options.withDescription("The integration id the documents are filed under"),
      Options.withDefault("cli")
    ),
    concurrency: Options.integer("concurrency").pipe(Options.withDescription("Uploads at a time"), Options.withDefault(4)),
    json: jsonOption
  },
  (flags) =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const path = yield* Path.Path
      const { client } = yield* connect(flags)
      const files = yield* filesUnder(flags.paths)
      const progress = makeProgress({ label: "ingest", total: files.length, unit: "items", noun: "files" })
      const outcomes = yield* Effect.forEach(
        files,
        ({ file, title }) =>
          Effect.gen(function*() {
            const read = textOf(yield* fs.readFile(file))
            if ("skipped" in read) return { file, id: null, error: `skipped: ${read.skipped}` }
            const document = yield* client.documents.create({
              payload: {
                title,
                content: read.text,
                integration_id: flags.integration,
                metadata: { path: path.resolve(file), ingested_by: "cairn docs ingest" }
              }
            })
            return { file, id: document.id, error: null }
          }).pipe(
            Effect.catchAll((error) => Effect.succeed({ file, id: null, error: describeFailure(error) })),
            Effect.ensuring(Effect.sync(() => progress.advance()))
          ),
        { concurrency: Math.max(1, flags.concurrency) }
      )
      progress.finish()
      const stored = outcomes.filter((outcome) => outcome.id !== null)
      const failed = outcomes.filter((outcome) => outcome.error !== null)
      if (flags.json) yield* printJson({ stored: stored.length, failed: failed.length, documents: outcomes })
      else {
        for (const { error, file } of failed) yield* Console.error(style.yellow(`${file}: ${error}`))
        yield* Console.log(
          `${style.green("Stored")} ${stored.length} of ${files.length} files as documents${
            failed.length > 0 ? `; ${failed.length} not stored` : ""
          }`
        )
      }
      // Some files not stored is a failure the exit code says, after the others were stored.
      if (failed.length > 0) return yield* Effect.fail(new Error(`${failed.length} of ${files.length} files were not stored`))
    })
).pipe(Command.withDescription("Store files (or every file under folders) as searchable documents"))

const docsSearch = answerCommand(
  "search",
  {
    query: Args.text({ name: "query" }).pipe(Args.repeated),
    limit: Options.integer("limit").pipe(Options.optional),
    integration: Options.text("integration").pipe(Options.optional)
  },
  (client, flags) =>
    client.documents.search({
      urlParams: {
        q: flags.query.join(" "),
        ...(Option.isSome(flags.limit) ? { limit: flags.limit.value } : {}),
        ...(Option.isSome(flags.integration) ? { integration_id: flags.integration.value } : {})
      }
    }),
  (results) =>
    results.length === 0
      ? "Nothing found."
      : results
        .map((result, i) =>
          `${style.bold(`${i + 1}. ${clip(result.title, columns() - 20)}`)} ${style.dim(result.score.toFixed(3))}\n   ${
            inline(result.snippet, columns() - 4)
          }`
        )
        .join("\n")
).pipe(Command.withDescription("Search the documents (vector and full text)"))

export const docsCommand = Command.make("docs").pipe(
  Command.withDescription("Documents: ingest, search"),
  Command.withSubcommands([docsIngest, docsSearch])
)
