/**
 * The rule for the dispatch config of a bound channel (the SDK's `registerMetadata` `dispatch_type`
 * and `dispatch_config`): a message that belongs in a channel's conversation but is no run's answer
 * (a delegated bot's answer) reaches the channel through the first of its bindings, oldest first,
 * whose integration registered a rule that answers a config for it. The integration's dispatcher of
 * `dispatch_type` (default its integration type) posts it with that config.
 */
import { Effect } from "effect"
import type { Channel } from "../channels/Model.ts"
import type { IntegrationMetadata } from "../sdk/index.ts"
import type { Binding } from "./Model.ts"

export interface BoundDispatch {
  readonly type: string
  readonly config: Record<string, unknown>
  /** The binding it came from. */
  readonly integration_type: string
  readonly client_id: string
}

const errorText = (error: unknown) => (error instanceof Error ? error.message : String(error))

/** The rule's answer for one binding; a rule that throws, or answers no object, reaches nothing (logged). */
const ruleAnswer = (metadata: IntegrationMetadata, channel: Channel, binding: Binding) =>
  Effect.tryPromise(async () =>
    metadata.dispatch_config!({
      client_id: binding.client_id,
      external_id: binding.client_id.slice(metadata.client_id_prefix.length),
      channel_id: channel.id,
      bot_id: channel.bot_id,
      integration_config: { ...channel.integration_config }
    })
  ).pipe(
    Effect.map((config) => (config && typeof config === "object" && !Array.isArray(config) ? config : null)),
    Effect.catchAll((error) =>
      Effect.as(
        Effect.logWarning(
          `The dispatch rule of ${metadata.integration_type} failed for ${binding.client_id}: ${errorText(error.error)}`
        ),
        null
      )
    )
  )

export const boundDispatch = (
  channel: Channel,
  bindings: ReadonlyArray<Binding>,
  metadataOf: (integrationType: string, clientId: string) => IntegrationMetadata | undefined
): Effect.Effect<BoundDispatch | null> =>
  Effect.gen(function*() {
    for (const binding of bindings) {
      const metadata = metadataOf(binding.integration_type, binding.client_id)
      if (!metadata?.dispatch_config) continue
      const config = yield* ruleAnswer(metadata, channel, binding)
      if (config) {
        return {
          type: metadata.dispatch_type ?? metadata.integration_type,
          config,
          integration_type: binding.integration_type,
          client_id: binding.client_id
        }
      }
    }
    return null
  })
