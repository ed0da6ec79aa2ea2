/** `cairn docs ingest <files or folders>` (with a progress bar) and `cairn docs search <query>`. */
import { Args, Command, Options } from "@effect/cli"
import { FileSystem, Path } from "@effect/platform"
import { Console, Effect, Option } from "effect"
import { createHash } from "node:crypto"
import type { CairnClient } from "../client.ts"
import { type DocumentPage, MAX_CONTENT_CHARS } from "../documents/Model.ts"
import { answerCommand, connect, connectionOptions } from "./Connection.ts"
import { clip, columns, describeFailure, fail, inline, jsonOption, printJson, style } from "./Output.ts"
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

/** The hash a stored file is known by (`metadata.content_sha256`), so ingesting it again skips it. */
export const contentHash = (text: string) => createHash("sha256").update(text).digest("hex")

/** The hashes of the documents already filed under an integration, read page by page. */
const storedHashes = (client: CairnClient, integration: string) =>
  Effect.gen(function*() {
    const hashes = new Set<string>()
    let offset: number | null = 0
    while (offset !== null) {
      const page: DocumentPage = yield* client.documents.list({ urlParams: { integration_id: integration, limit: 500, offset } })
      for (const item of page.items) {
        if (typeof item.metadata.content_sha256 === "string") hashes.add(item.metadata.content_sha256)
      }
      offset = page.next_offset
    }
    return hashes
  })

interface Outcome {
  readonly file: string
  readonly id: string | null
  readonly skipped: string | null
  readonly error: string | null
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
      // Drawn before anything is asked of the server: the first upload may wait on the embedder.
      const progress = makeProgress({ label: "ingest", total: files.length, unit: "items", noun: "files" })
      progress.working("looking for documents already stored")
      const stored = yield* storedHashes(client, flags.integration)
      const outcomes = yield* Effect.forEach(
        files,
        ({ file, title }) =>
          Effect.gen(function*() {
            const read = textOf(yield* fs.readFile(file))
            if ("skipped" in read) return { file, id: null, skipped: read.skipped, error: null } satisfies Outcome
            const hash = contentHash(read.text)
            if (stored.has(hash)) return { file, id: null, skipped: "already stored", error: null } satisfies Outcome
            // Two files with the same text in one run are one document.
            stored.add(hash)
            progress.working(title)
            const document = yield* client.documents.create({
              payload: {
                title,
                content: read.text,
                integration_id: flags.integration,
                metadata: { path: path.resolve(file), ingested_by: "cairn docs ingest", content_sha256: hash }
              }
            })
            return { file, id: document.id, skipped: null, error: null } satisfies Outcome
          }).pipe(
            Effect.catchAll((error) => Effect.succeed({ file, id: null, skipped: null, error: describeFailure(error) } satisfies Outcome)),
            Effect.ensuring(Effect.sync(() => progress.advance()))
          ),
        { concurrency: Math.max(1, flags.concurrency) }
      )
      progress.finish()
      const added = outcomes.filter((outcome) => outcome.id !== null)
      const skipped = outcomes.filter((outcome) => outcome.skipped !== null)
      const failed = outcomes.filter((outcome) => outcome.error !== null)
      if (flags.json) yield* printJson({ stored: added.length, skipped: skipped.length, failed: failed.length, documents: outcomes })
      else {
        for (const { file, skipped: why } of skipped) yield* Console.error(style.dim(`${file}: skipped, ${why}`))
        for (const { error, file } of failed) yield* Console.error(style.yellow(`${file}: ${error}`))
        yield* Console.log(
          `${style.green("Stored")} ${added.length} of ${files.length} files as documents${
            skipped.length > 0 ? `; ${skipped.length} skipped` : ""
          }${failed.length > 0 ? `; ${failed.length} not stored` : ""}`
        )
      }
      // A file that could not be stored is a failure the exit code says, after the others were
      // stored; a file skipped (already stored, empty, not text) is not.
      if (failed.length > 0) return yield* fail(`${failed.length} of ${files.length} files were not stored`)
    })
).pipe(
  Command.withDescription(
    "Store files (or every file under folders) as searchable documents; files already stored (same text) are skipped"
  )
)

/**
 * Below this cosine similarity a vector-only hit is only the nearest neighbour of the query, not a
 * match: a query of nonsense still answers its nearest documents, and the CLI says so.
 */
const weakSimilarity = 0.3

/** Whether a hit matches the query: found by full text (no similarity), or similar enough. */
export const isMatch = (result: { readonly similarity: number | null }, min = weakSimilarity) =>
  result.similarity === null || result.similarity >= min

const docsSearch = answerCommand(
  "search",
  {
    query: Args.text({ name: "query" }).pipe(Args.withDescription("Words to look for"), Args.repeated),
    limit: Options.integer("limit").pipe(Options.withDescription("At most this many results"), Options.optional),
    integration: Options.text("integration").pipe(Options.withDescription("Only documents filed under this integration"), Options.optional)
  },
  (client, flags) =>
    client.documents.search({
      urlParams: {
        q: flags.query.join(" "),
        ...(Option.isSome(flags.limit) ? { limit: flags.limit.value } : {}),
        ...(Option.isSome(flags.integration) ? { integration_id: flags.integration.value } : {})
      }
    }),
  (results) => {
    const shown = results
      .map((result, i) =>
        `${style.bold(`${i + 1}. ${clip(result.title, columns() - 20)}`)} ${style.dim(result.score.toFixed(3))}\n   ${
          inline(result.snippet, columns() - 4)
        }`
      )
      .join("\n")
    if (results.length === 0) return "Nothing found."
    if (results.some((result) => isMatch(result))) return shown
    const best = Math.max(...results.map((result) => result.similarity ?? 0))
    return `No document matches well (best similarity ${best.toFixed(2)}, under ${weakSimilarity}); the nearest:\n${style.dim(shown)}`
  }
).pipe(Command.withDescription("Search the documents (vector and full text); says so when nothing matches well"))

export const docsCommand = Command.make("docs").pipe(
  Command.withDescription("Documents: ingest, search"),
  Command.withSubcommands([docsIngest, docsSearch])
)
