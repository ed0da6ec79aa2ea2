/**
 * The client id prefixes integrations register (spec: `registerMetadata`'s `client_id_prefix`): a
 * channel whose `client_id` starts with one is that integration's (`msgbridge:+4670…` is the
 * message bridge's). Filled by the integration loader as each integration loads; read wherever the
 * server asks whose a channel is (a channel's `integration`, the channel list's filter).
 */
import { Effect } from "effect"

export class ClientPrefixes extends Effect.Service<ClientPrefixes>()("cairn/ClientPrefixes", {
  sync: () => {
    /** prefix → integration id */
    const prefixes = new Map<string, string>()
    return {
      register: (prefix: string, integration: string) => Effect.sync(() => void prefixes.set(prefix, integration)),
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
