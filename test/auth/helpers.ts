/** Helpers shared by the access-control tests: create keys through the admin API's typed client. */
import type { CreateApiKey } from "../../src/access/keys/Model.ts"
import type { ClientCalls } from "../support/client.ts"

export interface CreatedKey {
  readonly id: string
  readonly key: string
  readonly scopes: ReadonlyArray<string>
}

/** A key with these scopes; the typed call succeeds only on the declared 201. */
export const createKey = (
  server: Pick<ClientCalls, "call">,
  scopes: ReadonlyArray<string>,
  extra: Partial<CreateApiKey> = {}
): Promise<CreatedKey> =>
  server.call((client) =>
    client.apiKeys.create({ payload: { name: `key ${scopes.join(" ") || "(none)"}`, scopes, ...extra } })
  )

/** Polls until `check` holds or `timeoutMs` passes; answers the elapsed milliseconds. */
export const eventually = async (check: () => Promise<boolean>, timeoutMs: number, everyMs = 50): Promise<number> => {
  const started = Date.now()
  for (;;) {
    if (await check()) return Date.now() - started
    if (Date.now() - started > timeoutMs) throw new Error(`Condition not met within ${timeoutMs} ms`)
    await new Promise((resolve) => setTimeout(resolve, everyMs))
  }
}
