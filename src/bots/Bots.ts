/**
 * Bots: YAML files in the project's `bots/` and each BOTS_DIR are synced into the database at
 * startup; the admin API creates and edits more. A `default` bot always exists.
 */
import { Effect, Either, Layer, Option, ParseResult, Schema } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import YAML from "yaml"
import { AppConfig, repositoryFolder } from "../config/AppConfig.ts"
import { projectDir } from "../config/ProjectRoot.ts"
import { ValidationError, ValidationIssue } from "../contract/Errors.ts"
import { traced } from "../telemetry/Spans.ts"
import { BotConflict, BotNotFound } from "./Errors.ts"
import { Bot, BotConfig, type CreateBot, DEFAULT_BOT_ID, type UpdateBot } from "./Model.ts"
import { type BotRow, BotsRepo } from "./Repo.ts"

/** How long a bot read stays cached. */
export const cacheMs = 2_000

export const projectBotsDir = projectDir("bots")

const decodeConfig = Schema.decodeUnknownEither(BotConfig, { errors: "all" })

const builtInDefault: BotConfig = Schema.decodeUnknownSync(BotConfig)({
  id: DEFAULT_BOT_ID,
  name: "Cairn",
  system_prompt: "You are Cairn, a helpful assistant. Answer clearly and concisely."
})

const toBot = (row: BotRow): Bot => {
  const config = decodeConfig({ ...(row.config as object), id: row.id })
  // A row an older release wrote that no longer decodes still serves its id and name.
  const valid = Either.isRight(config)
    ? config.right
    : { ...builtInDefault, id: row.id, name: String((row.config as { name?: unknown })?.name ?? row.id) }
  return new Bot({ ...valid, source: row.source, created_at: row.created_at, updated_at: row.updated_at })
}

/** Every `*.yaml`/`*.yml` file of the directories, in order; a later file with the same id wins. */
export const readBotFiles = (dirs: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const byId = new Map<string, BotConfig>()
    for (const dir of dirs) {
      if (!fs.existsSync(dir)) continue
      for (const file of fs.readdirSync(dir).sort()) {
        if (!/\.ya?ml$/.test(file)) continue
        const where = path.join(dir, file)
        const parsed = Either.try(() => YAML.parse(fs.readFileSync(where, "utf8")))
        const config = Either.flatMap(parsed, (raw) =>
          Either.mapLeft(decodeConfig(raw), (error) => ParseResult.TreeFormatter.formatErrorSync(error)))
        if (Either.isLeft(config)) {
          yield* Effect.logError(`Skipping bot file ${where}: ${String(config.left)}`)
          continue
        }
        byId.set(config.right.id, config.right)
      }
    }
    return [...byId.values()]
  })

export class Bots extends Effect.Service<Bots>()("cairn/Bots", {
  effect: Effect.gen(function*() {
    const repo = yield* BotsRepo

    // Every turn reads its bot: a short cache (another process's edit shows within `cacheMs`; an
    // edit made here at once).
    const cache = new Map<string, { readonly bot: Bot; readonly at: number }>()
    const get = (id: string) =>
      Effect.suspend(() => {
        const hit = cache.get(id)
        if (hit && Date.now() - hit.at < cacheMs) return Effect.succeed(hit.bot)
        return Effect.flatMap(repo.find(id), (found) => {
          if (Option.isNone(found)) return Effect.fail(new BotNotFound({ detail: `Bot not found: ${id}` }))
          const bot = toBot(found.value)
          cache.set(id, { bot, at: Date.now() })
          return Effect.succeed(bot)
        })
      })
    const forget = (id: string) => Effect.sync(() => void cache.delete(id))

    const list = Effect.map(repo.list, (rows) => rows.map(toBot))

    const create = (input: CreateBot) =>
      Effect.gen(function*() {
        const inserted = yield* repo.insert(input, "api")
        if (!inserted) return yield* new BotConflict({ detail: `A bot with id ${input.id} already exists` })
        return yield* get(input.id)
      })

    const update = (id: string, changes: UpdateBot) =>
      Effect.gen(function*() {
        const current = yield* get(id)
        const merged = decodeConfig({ ...current, ...stripUndefined(changes), id })
        if (Either.isLeft(merged)) {
          return yield* new ValidationError({
            detail: ParseResult.ArrayFormatter.formatErrorSync(merged.left).map(
              (issue) => new ValidationIssue({ loc: ["body", ...issue.path.map(String)], msg: issue.message, type: "value_error" })
            )
          })
        }
        yield* repo.update(merged.right)
        yield* forget(id)
        return yield* get(id)
      })

    const remove = (id: string) =>
      Effect.gen(function*() {
        if (id === DEFAULT_BOT_ID) return yield* new BotConflict({ detail: "The default bot cannot be deleted" })
        const removed = yield* repo.remove(id)
        yield* forget(id)
        if (!removed) return yield* new BotNotFound({ detail: `Bot not found: ${id}` })
      })

    /** Syncs the bot files of `dirs` (a file's bot replaces a file's, never the API's); answers their ids. */
    const syncFiles = (dirs: ReadonlyArray<string>) =>
      Effect.gen(function*() {
        const files = yield* readBotFiles(dirs)
        for (const bot of files) {
          yield* repo.syncFromFile(bot)
          yield* forget(bot.id)
        }
        return files.map((bot) => bot.id)
      })

    return traced("Bots", { get, list, create, update, remove, syncFiles } as const)
  }),
  dependencies: [BotsRepo.Default]
}) {}

const stripUndefined = (value: object) => Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined))

/** Startup: sync the bot files, then make sure the default bot exists. */
export const BotFilesSync = Layer.effectDiscard(
  Effect.gen(function*() {
    const config = yield* AppConfig
    const repo = yield* BotsRepo
    const files = yield* readBotFiles([projectBotsDir, ...config.botsDirs, ...repositoryFolder(config, "bots")])
    yield* Effect.forEach(files, (bot) => repo.syncFromFile(bot), { discard: true })
    yield* repo.insert(builtInDefault, "file")
    yield* Effect.logDebug(`Bots synced from files: ${files.map((bot) => bot.id).join(", ") || "(none)"}`)
  })
).pipe(Layer.provide(BotsRepo.Default))
