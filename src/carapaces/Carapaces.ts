/**
 * Carapaces (capability bundles). YAML files in the project's `carapaces/` and in integrations'
 * `carapaces/` folders are synced into the database (source `file`); the API creates and edits
 * more (source `api`; a file carapace edited through the API stays as edited). They attach to
 * bots (the bot's `carapaces` list), to channels, and to every channel bound to an integration
 * whose activation manifest names them.
 */
import { Effect, Either, Layer, ParseResult, Schema } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import YAML from "yaml"
import { Bindings } from "../bindings/Bindings.ts"
import { Bots } from "../bots/Bots.ts"
import { Channels } from "../channels/Channels.ts"
import { projectDir } from "../config/ProjectRoot.ts"
import { ValidationError, ValidationIssue } from "../contract/Errors.ts"
import { traced } from "../telemetry/Spans.ts"
import { CarapaceConflict, CarapaceNotFound } from "./Errors.ts"
import {
  Carapace,
  CarapaceConfig,
  CarapaceCycle,
  ChannelCarapaces,
  type CreateCarapace,
  ResolvedCarapaces,
  type UpdateCarapace
} from "./Model.ts"
import { type CarapaceRow, CarapacesRepo } from "./Repo.ts"
import { type CarapaceNode, resolveIncludes } from "./Resolve.ts"

export const projectCarapacesDir = projectDir("carapaces")

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

const decodeConfig = Schema.decodeUnknownEither(CarapaceConfig, { errors: "all" })

const toCarapace = (row: CarapaceRow): Carapace => {
  const config = decodeConfig({ ...(row.config as object), id: row.id })
  // A row an older release wrote that no longer decodes keeps its id and contributes nothing.
  const valid = Either.isRight(config)
    ? config.right
    : { id: row.id, name: row.id, description: "", tools: [], skills: [], includes: [] }
  return new Carapace({ ...valid, source: row.source, origin: row.origin, created_at: row.created_at, updated_at: row.updated_at })
}

const toIssues = (error: ParseResult.ParseError) =>
  ParseResult.ArrayFormatter.formatErrorSync(error).map(
    (issue) => new ValidationIssue({ loc: ["body", ...issue.path.map(String)], msg: issue.message, type: "value_error" })
  )

const cycleIssue = (cycle: CarapaceCycle, loc: ReadonlyArray<string>) => ValidationError.single(loc, cycle.message, "include_cycle")

export interface TurnCapabilities {
  /** Every carapace that contributed, includes followed. */
  readonly carapaces: ReadonlyArray<string>
  readonly tools: ReadonlyArray<string>
  readonly skills: ReadonlyArray<string>
}

export class Carapaces extends Effect.Service<Carapaces>()("cairn/Carapaces", {
  effect: Effect.gen(function*() {
    const repo = yield* CarapacesRepo
    const bots = yield* Bots
    const channels = yield* Channels
    const bindings = yield* Bindings

    const get = (id: string) =>
      Effect.flatMap(
        repo.find(id),
        (row) => row ? Effect.succeed(toCarapace(row)) : Effect.fail(new CarapaceNotFound({ detail: `Carapace not found: ${id}` }))
      )

    const list = Effect.map(repo.list, (rows) => rows.map(toCarapace))

    const graph = (replacing?: CarapaceNode) =>
      Effect.map(list, (all) => {
        const nodes = new Map<string, CarapaceNode>(all.map((carapace) => [carapace.id, carapace]))
        if (replacing) nodes.set(replacing.id, replacing)
        return nodes
      })

    /** A carapace about to be stored: its includes exist, and no cycle runs through it. */
    const checkIncludes = (candidate: CarapaceConfig) =>
      Effect.gen(function*() {
        const nodes = yield* graph(candidate)
        const unknown = candidate.includes
          .map((id, index) => ({ id, index }))
          .filter(({ id }) => !nodes.has(id))
        if (unknown.length > 0) {
          return yield* new ValidationError({
            detail: unknown.map(
              ({ id, index }) =>
                new ValidationIssue({ loc: ["body", "includes", index], msg: `Unknown carapace: ${id}`, type: "unknown_carapace" })
            )
          })
        }
        const resolved = resolveIncludes(nodes, [candidate.id])
        if (Either.isLeft(resolved)) return yield* cycleIssue(resolved.left, ["body", "includes"])
      })

    const create = (input: CreateCarapace) =>
      Effect.gen(function*() {
        const config: CarapaceConfig = { ...input }
        yield* checkIncludes(config)
        const inserted = yield* repo.insert(config)
        if (!inserted) return yield* new CarapaceConflict({ detail: `A carapace with id ${input.id} already exists` })
        return yield* get(input.id)
      })

    const update = (id: string, changes: UpdateCarapace) =>
      Effect.gen(function*() {
        const current = yield* get(id)
        const merged = decodeConfig({
          id,
          name: changes.name ?? current.name,
          description: changes.description ?? current.description,
          tools: changes.tools ?? current.tools,
          skills: changes.skills ?? current.skills,
          includes: changes.includes ?? current.includes
        })
        if (Either.isLeft(merged)) return yield* new ValidationError({ detail: toIssues(merged.left) })
        yield* checkIncludes(merged.right)
        yield* repo.update(merged.right)
        return yield* get(id)
      })

    /** Refused while another carapace includes it; its channel attachments go with it. */
    const remove = (id: string) =>
      Effect.gen(function*() {
        yield* get(id)
        const includers = (yield* list).filter((carapace) => carapace.includes.includes(id)).map((carapace) => carapace.id)
        if (includers.length > 0) {
          return yield* new CarapaceConflict({ detail: `Carapace ${id} is included by ${includers.join(", ")}` })
        }
        const removed = yield* repo.remove(id)
        if (!removed) return yield* new CarapaceNotFound({ detail: `Carapace not found: ${id}` })
      })

    /** The carapaces with includes followed; fails with the cycle when one is met. */
    const resolve = (ids: ReadonlyArray<string>): Effect.Effect<ResolvedCarapaces, CarapaceCycle> =>
      Effect.flatMap(graph(), (nodes) =>
        Either.match(resolveIncludes(nodes, ids), {
          onLeft: (cycle) => Effect.fail(cycle),
          onRight: (resolution) => Effect.succeed(new ResolvedCarapaces(resolution))
        }))

    const channelCarapaces = (channelId: string) =>
      Effect.gen(function*() {
        yield* channels.get(channelId)
        return new ChannelCarapaces({ channel_id: channelId, carapaces: yield* repo.forChannel(channelId) })
      })

    /** Replaces a channel's carapaces; each must exist. */
    const setChannelCarapaces = (channelId: string, ids: ReadonlyArray<string>) =>
      Effect.gen(function*() {
        yield* channels.get(channelId)
        const unique = [...new Set(ids)]
        const nodes = yield* graph()
        const unknown = ids.map((id, index) => ({ id, index })).filter(({ id }) => !nodes.has(id))
        if (unknown.length > 0) {
          return yield* new ValidationError({
            detail: unknown.map(
              ({ id, index }) =>
                new ValidationIssue({ loc: ["body", "carapaces", index], msg: `Unknown carapace: ${id}`, type: "unknown_carapace" })
            )
          })
        }
        const resolved = resolveIncludes(nodes, unique)
        if (Either.isLeft(resolved)) return yield* cycleIssue(resolved.left, ["body", "carapaces"])
        yield* repo.setForChannel(channelId, unique)
        return new ChannelCarapaces({ channel_id: channelId, carapaces: unique })
      })

    /**
     * Records the carapaces an integration's activation manifest injects (replacing what it named
     * before). They apply to every channel with a binding whose integration_type equals
     * `integrationId`.
     */
    const activate = (integrationId: string, carapaceIds: ReadonlyArray<string>) =>
      repo.setActivated(integrationId, [...new Set(carapaceIds)])

    /**
     * What one agent turn gets: the bot's carapaces, then the channel's, then those activated by
     * the integrations bound to the channel, includes followed. A carapace that is missing or sits
     * in an include cycle (only files can make one) is logged and left out; the turn goes on.
     */
    const forTurn = (botId: string, channelId?: string | null): Effect.Effect<TurnCapabilities, never> =>
      Effect.gen(function*() {
        const botCarapaces = yield* bots.get(botId).pipe(
          Effect.map((bot) => bot.carapaces),
          Effect.catchTag("BotNotFound", () => Effect.succeed([] as ReadonlyArray<string>))
        )
        const roots: Array<string> = [...botCarapaces]
        if (channelId && uuidPattern.test(channelId)) {
          roots.push(...(yield* repo.forChannel(channelId)))
          const bound = yield* bindings.forChannel(channelId).pipe(Effect.catchTag("ChannelNotFound", () => Effect.succeed([])))
          roots.push(...(yield* repo.activatedFor([...new Set(bound.map((binding) => binding.integration_type))])))
        }
        const nodes = yield* graph()
        const carapaces: Array<string> = []
        const tools = new Set<string>()
        const skills = new Set<string>()
        for (const root of new Set(roots)) {
          const resolved = resolveIncludes(nodes, [root])
          if (Either.isLeft(resolved)) {
            yield* Effect.logError(`Carapace ${root} left out of the turn of bot ${botId}: ${resolved.left.message}`)
            continue
          }
          if (resolved.right.missing.length > 0) {
            yield* Effect.logWarning(`Unknown carapaces named for bot ${botId}: ${resolved.right.missing.join(", ")}`)
          }
          for (const id of resolved.right.carapaces) if (!carapaces.includes(id)) carapaces.push(id)
          resolved.right.tools.forEach((tool) => tools.add(tool))
          resolved.right.skills.forEach((skill) => skills.add(skill))
        }
        return { carapaces, tools: [...tools], skills: [...skills] }
      })

    /**
     * Syncs the `*.yaml`/`*.yml` files of a directory (an id defaults to the file name); `source`
     * is recorded as the origin (`core`, `integration:<id>`). Broken files and include cycles are
     * logged; the ids synced are answered.
     */
    const registerFromDirectory = (dir: string, source: string) =>
      Effect.gen(function*() {
        const synced: Array<string> = []
        if (!fs.existsSync(dir)) return synced
        for (const file of fs.readdirSync(dir).sort()) {
          if (!/\.ya?ml$/.test(file)) continue
          const where = path.join(dir, file)
          const parsed = Either.try(() => YAML.parse(fs.readFileSync(where, "utf8")) as unknown)
          const config = Either.flatMap(parsed, (raw) =>
            Either.mapLeft(
              decodeConfig(raw && typeof raw === "object" ? { id: file.replace(/\.ya?ml$/, ""), ...raw } : raw),
              (error) => ParseResult.TreeFormatter.formatErrorSync(error)
            ))
          if (Either.isLeft(config)) {
            yield* Effect.logError(`Skipping carapace file ${where}: ${String(config.left)}`)
            continue
          }
          yield* repo.syncFromFile(config.right, source)
          synced.push(config.right.id)
        }
        const nodes = yield* graph()
        for (const id of synced) {
          const resolved = resolveIncludes(nodes, [id])
          if (Either.isLeft(resolved)) yield* Effect.logError(`Carapace ${id} (${dir}): ${resolved.left.message}`)
        }
        return synced
      })

    return traced(
      "Carapaces",
      {
        get,
        list,
        create,
        update,
        remove,
        resolve,
        channelCarapaces,
        setChannelCarapaces,
        activate,
        forTurn,
        registerFromDirectory
      } as const
    )
  }),
  dependencies: [CarapacesRepo.Default, Bindings.Default, Bots.Default, Channels.Default]
}) {}

/** Startup: sync the project's carapace files. */
export const CarapaceFilesSync = Layer.effectDiscard(
  Effect.flatMap(
    Carapaces,
    (carapaces) =>
      Effect.flatMap(
        carapaces.registerFromDirectory(projectCarapacesDir, "core"),
        (ids) => Effect.logDebug(`Carapaces synced from files: ${ids.join(", ") || "(none)"}`)
      )
  )
).pipe(Layer.provide(Carapaces.Default))
