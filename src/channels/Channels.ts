/**
 * Channels: one per (client_id, bot_id), made explicitly by an admin or on first use by a client.
 * The agent loop reads a channel's settings and points it at its active session.
 */
import { Effect, Option } from "effect"
import * as crypto from "node:crypto"
import { Bots } from "../bots/Bots.ts"
import { ValidationError } from "../contract/Errors.ts"
import { traced } from "../telemetry/Spans.ts"
import { ClientPrefixes } from "./ClientPrefixes.ts"
import { ChannelConflict, ChannelNotFound } from "./Errors.ts"
import { Channel, type ChannelFilter, type CreateChannel, type UpdateChannel } from "./Model.ts"
import { type ChannelChanges, type ChannelRow, ChannelsRepo } from "./Repo.ts"

const notFound = (id: string) => new ChannelNotFound({ detail: `Channel not found: ${id}` })

/** How often get-or-create retries when the row it collided with vanished before it could read it. */
const ensureAttempts = 3

export class Channels extends Effect.Service<Channels>()("cairn/Channels", {
  effect: Effect.gen(function*() {
    const repo = yield* ChannelsRepo
    const bots = yield* Bots
    const prefixes = yield* ClientPrefixes
    const toChannel = (row: ChannelRow): Channel => new Channel({ ...row, integration: prefixes.integrationOf(row.client_id) })

    /** A channel's bot must exist; the error points at the request field. */
    const requireBot = (botId: string) =>
      bots.get(botId).pipe(
        Effect.catchTag(
          "BotNotFound",
          () => Effect.fail(ValidationError.single(["body", "bot_id"], `Unknown bot: ${botId}`, "unknown_bot"))
        ),
        Effect.asVoid
      )

    const get = (id: string): Effect.Effect<Channel, ChannelNotFound> =>
      Effect.flatMap(repo.find(id), (row) => (row ? Effect.succeed(toChannel(row)) : Effect.fail(notFound(id))))

    const findByClient = (clientId: string, botId: string): Effect.Effect<Option.Option<Channel>, never> =>
      Effect.map(repo.findByClient(clientId, botId), (row) => Option.map(Option.fromNullable(row), toChannel))

    /** `integration`: only that integration's channels (none when it registered no prefix). */
    const list = (filter: ChannelFilter & { readonly integration?: string | undefined }) =>
      Effect.suspend(() => {
        const prefix = filter.integration === undefined ? undefined : prefixes.prefixOf(filter.integration)
        if (filter.integration !== undefined && prefix === undefined) return Effect.succeed([])
        return Effect.map(repo.list({ ...filter, client_prefix: prefix }), (rows) => rows.map(toChannel))
      })

    /** Page `page` (from 1) of `pageSize` channels, and how many there are. */
    const page = (input: { readonly bot_id?: string | undefined; readonly page: number; readonly page_size: number }) =>
      Effect.map(
        Effect.all([
          list({ bot_id: input.bot_id, limit: input.page_size, offset: (input.page - 1) * input.page_size }),
          repo.count({ bot_id: input.bot_id })
        ]),
        ([channels, total]) => ({ channels, total, page: input.page, page_size: input.page_size })
      )

    /** An explicit channel; a second one for the same (client_id, bot_id) is a conflict. */
    const create = (input: CreateChannel) =>
      Effect.gen(function*() {
        yield* requireBot(input.bot_id)
        const id = crypto.randomUUID()
        const clientId = input.client_id ?? `channel:${id}`
        const row = yield* repo.insert({
          id,
          name: input.name,
          bot_id: input.bot_id,
          client_id: clientId,
          require_mention: input.require_mention,
          passive_memory: input.passive_memory,
          workspace_enabled: input.workspace_enabled,
          model_override: input.model_override
        })
        if (!row) {
          return yield* new ChannelConflict({
            detail: `A channel for client_id ${clientId} and bot ${input.bot_id} already exists`
          })
        }
        return toChannel(row)
      })

    /**
     * The channel of (client_id, bot_id), made when missing. Race-free across processes: the
     * insert does nothing when another request got there first, and the read then sees its row.
     */
    const ensure = (clientId: string, botId: string, name?: string) =>
      Effect.gen(function*() {
        yield* requireBot(botId)
        for (let attempt = 1;; attempt++) {
          const inserted = yield* repo.insert({
            id: crypto.randomUUID(),
            name: name ?? clientId,
            bot_id: botId,
            client_id: clientId,
            require_mention: false,
            passive_memory: false,
            workspace_enabled: false,
            model_override: null
          })
          if (inserted) return { channel: toChannel(inserted), created: true }
          const existing = yield* repo.findByClient(clientId, botId)
          if (existing) return { channel: toChannel(existing), created: false }
          // Deleted between our insert and our read: try again, a bounded number of times.
          if (attempt >= ensureAttempts) return yield* Effect.die(new Error(`Channel ${clientId}/${botId} kept vanishing`))
        }
      })

    const update = (id: string, input: UpdateChannel) =>
      Effect.gen(function*() {
        const changes: { -readonly [K in keyof ChannelChanges]: ChannelChanges[K] } = {}
        if (input.name !== undefined) changes.name = input.name
        if (input.require_mention !== undefined) changes.require_mention = input.require_mention
        if (input.passive_memory !== undefined) changes.passive_memory = input.passive_memory
        if (input.workspace_enabled !== undefined) changes.workspace_enabled = input.workspace_enabled
        if (input.model_override !== undefined) changes.model_override = input.model_override
        if (input.retrieval !== undefined) changes.retrieval = input.retrieval === null ? null : JSON.stringify(input.retrieval)
        if (Object.keys(changes).length === 0) return yield* get(id)
        const row = yield* repo.update(id, changes)
        return row ? toChannel(row) : yield* Effect.fail(notFound(id))
      })

    const remove = (id: string) => Effect.flatMap(repo.remove(id), (removed) => (removed ? Effect.void : Effect.fail(notFound(id))))

    /** Points the channel at the session its next messages go to (null: none). */
    const setActiveSession = (channelId: string, sessionId: string | null): Effect.Effect<void, ChannelNotFound> =>
      Effect.flatMap(repo.setActiveSession(channelId, sessionId), (updated) => updated ? Effect.void : Effect.fail(notFound(channelId)))

    return traced("Channels", { get, findByClient, list, page, create, ensure, update, remove, setActiveSession } as const)
  }),
  dependencies: [ChannelsRepo.Default, Bots.Default, ClientPrefixes.Default]
}) {}
