/**
 * The client id prefixes integrations register (spec: `registerMetadata`'s `client_id_prefix`): a
 * channel whose `client_id` starts with one is that integration's (`msgbridge:+4670…` is the
 * message bridge's). Filled by the integration loader as each integration loads; read wherever the
 * server asks whose a channel is (a channel's `integration`, the channel list's filter).
 */
import { Effect } from "effect"
import type { IntegrationMetadata } from "../sdk/index.ts"

export class ClientPrefixes extends Effect.Service<ClientPrefixes>()("cairn/ClientPrefixes", {
  sync: () => {
    /** prefix → integration id */
    const prefixes = new Map<string, string>()
    /** integration id → the metadata it registered (its attribution and bound-channel dispatch rule). */
    const metadata = new Map<string, IntegrationMetadata>()
    return {
      register: (prefix: string, integration: string, registered?: IntegrationMetadata) =>
        Effect.sync(() => {
          prefixes.set(prefix, integration)
          if (registered) metadata.set(integration, registered)
        }),
      /** The metadata of the integration whose channels a binding of `integrationType` under `clientId` is. */
      metadataOfBinding: (integrationType: string, clientId: string): IntegrationMetadata | undefined =>
        [...metadata.values()].find((m) => m.integration_type === integrationType && clientId.startsWith(m.client_id_prefix)),
      /** The metadata of the integration whose channels a dispatch type reaches (its `dispatch_type`, else its type). */
      metadataOfDispatchType: (dispatchType: string): IntegrationMetadata | undefined =>
        [...metadata.values()].find((m) => (m.dispatch_type ?? m.integration_type) === dispatchType),
      /** The integration whose prefix the client id starts with (the longest, should two nest), else null. */
      integrationOf: (clientId: string): string | null => {
        let found: string | null = null
        let length = 0
        for (const [prefix, integration] of prefixes) {
          if (prefix.length > length && clientId.startsWith(prefix)) {
            found = integration
            length = prefix.length
          }
        }
        return found
      },
      /** The prefix an integration registered, if it did. */
      prefixOf: (integration: string): string | undefined => {
        for (const [prefix, owner] of prefixes) if (owner === integration) return prefix
        return undefined
      }
    }
  }
}) {}
