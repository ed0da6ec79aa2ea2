/**
 * Channel integration bindings. An integration (the messaging bridge, the mailbox poller) finds the
 * channels an external conversation is bound to with `findChannelsByClientId`; a client id may be
 * bound to several channels, and each gets the message.
 */
import { Effect, Option } from "effect"
import * as crypto from "node:crypto"
import { Channels } from "../channels/Channels.ts"
import { ClientPrefixes } from "../channels/ClientPrefixes.ts"
import type { ChannelNotFound } from "../channels/Errors.ts"
import type { Channel } from "../channels/Model.ts"
import { traced } from "../telemetry/Spans.ts"
import { boundDispatch } from "./Dispatch.ts"
import { BindingConflict, BindingNotFound } from "./Errors.ts"
import { Binding, type CreateBinding, type UpdateBinding } from "./Model.ts"
import { type BindingRow, BindingsRepo } from "./Repo.ts"

const toBinding = (row: BindingRow): Binding => new Binding(row)

export interface ChannelBinding {
  readonly channel: Channel
  readonly binding: Binding
}

export class Bindings extends Effect.Service<Bindings>()("cairn/Bindings", {
  effect: Effect.gen(function*() {
    const repo = yield* BindingsRepo
    const channels = yield* Channels
    const prefixes = yield* ClientPrefixes

    const forChannel = (channelId: string): Effect.Effect<ReadonlyArray<Binding>, ChannelNotFound> =>
      Effect.zipRight(channels.get(channelId), Effect.map(repo.forChannel(channelId), (rows) => rows.map(toBinding)))

    const create = (channelId: string, input: CreateBinding) =>
      Effect.gen(function*() {
        yield* channels.get(channelId)
        const row = yield* repo.insert({ id: crypto.randomUUID(), channel_id: channelId, ...input })
        if (!row) {
          return yield* new BindingConflict({
            detail: `Channel ${channelId} is already bound to ${input.integration_type} client ${input.client_id}`
          })
        }
        return toBinding(row)
      })

    const update = (channelId: string, bindingId: string, input: UpdateBinding) =>
      Effect.gen(function*() {
        yield* channels.get(channelId)
        const row = yield* repo.update(channelId, bindingId, input)
        if (!row) return yield* new BindingNotFound({ detail: `Binding not found on channel ${channelId}: ${bindingId}` })
        return toBinding(row)
      })

    const remove = (channelId: string, bindingId: string) =>
      Effect.gen(function*() {
        yield* channels.get(channelId)
        const removed = yield* repo.remove(channelId, bindingId)
        if (!removed) return yield* new BindingNotFound({ detail: `Binding not found on channel ${channelId}: ${bindingId}` })
      })

    /** Rows joined with their channels, in order; a channel deleted meanwhile is left out. */
    const withChannels = (rows: ReadonlyArray<BindingRow>): Effect.Effect<ReadonlyArray<ChannelBinding>, never> =>
      Effect.gen(function*() {
        const found: Array<ChannelBinding> = []
        for (const row of rows) {
          const channel = yield* channels.get(row.channel_id).pipe(
            Effect.map(Option.some),
            Effect.catchTag("ChannelNotFound", () => Effect.succeedNone)
          )
          if (Option.isSome(channel)) found.push({ channel: channel.value, binding: toBinding(row) })
        }
        return found
      })

    /**
     * The channels bound to a client id, each with its binding, oldest binding first; only the
     * bindings of one integration type when given.
     */
    const findChannelsByClientId = (clientId: string, integrationType?: string): Effect.Effect<ReadonlyArray<ChannelBinding>, never> =>
      Effect.flatMap(
        repo.byClientId(clientId),
        (rows) => withChannels(integrationType === undefined ? rows : rows.filter((row) => row.integration_type === integrationType))
      )

    /** The channels bound under an integration type, each with its binding, oldest binding first. */
    const channelsOfType = (integrationType: string) => Effect.flatMap(repo.byIntegrationType(integrationType), withChannels)

    /** Every binding of an integration type (the bridge's diagnostics, the mailbox's deliveries). */
    const forIntegrationType = (integrationType: string) =>
      Effect.map(repo.byIntegrationType(integrationType), (rows) => rows.map(toBinding))

    /**
     * Where a message for a channel's conversation goes by its bindings (the rule of Dispatch.ts):
     * a dispatch type and config, or null when no binding's integration reaches it (or no channel).
     */
    const dispatchOf = (channelId: string) =>
      Effect.gen(function*() {
        const channel = yield* Effect.option(channels.get(channelId))
        if (channel._tag === "None") return null
        const rows = yield* repo.forChannel(channelId)
        return yield* boundDispatch(channel.value, rows.map(toBinding), prefixes.metadataOfBinding)
      })

    return traced(
      "Bindings",
      { create, forChannel, update, remove, findChannelsByClientId, channelsOfType, forIntegrationType, dispatchOf } as const
    )
  }),
  dependencies: [BindingsRepo.Default, Channels.Default, ClientPrefixes.Default]
}) {}
