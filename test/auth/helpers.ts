/** Helpers shared by the access-control tests: create keys through the admin API's typed client. */
import type { CreateApiKey } from "../../src/access/keys/Model.ts"
import type { Scope } from "../../src/auth/Scopes.ts"
import type { ClientCalls } from "../support/client.ts"
import { eventually as waitUntil } from "../support/time.ts"

export interface CreatedKey {
  readonly id: string
  readonly key: string
  readonly scopes: ReadonlyArray<string>
}

/** A key with these scopes; the typed call succeeds only on the declared 201. */
export const createKey = (
  server: Pick<ClientCalls, "call">,
  scopes: ReadonlyArray<Scope>,
  extra: Partial<CreateApiKey> = {}
): Promise<CreatedKey> =>
  server.call((client) => client.apiKeys.create({ payload: { name: `key ${scopes.join(" ") || "(none)"}`, scopes, ...extra } }))

/** Polls until `check` holds; fails once `timeoutMs` (scaled by TEST_TIME_SCALE) has passed. */
export const eventually = (check: () => Promise<boolean>, timeoutMs: number, everyMs = 50): Promise<void> =>
  waitUntil(check, "the condition", timeoutMs, everyMs)
