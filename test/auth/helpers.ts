/** Helpers shared by the access-control tests: create keys through the admin API. */
import { expect } from "vitest"
import { json, type TestServer } from "../support/server.ts"

export interface CreatedKey {
  readonly id: string
  readonly key: string
  readonly scopes: ReadonlyArray<string>
}

export const createKey = async (
  server: Pick<TestServer, "request">,
  scopes: ReadonlyArray<string>,
  extra: Record<string, unknown> = {}
): Promise<CreatedKey> => {
  const response = await server.request("/api/v1/admin/api-keys", {
    method: "POST",
    body: JSON.stringify({ name: `key ${scopes.join(" ") || "(none)"}`, scopes, ...extra })
  })
  expect(response.status).toBe(201)
  return json(response)
}

/** Polls until `check` holds or `timeoutMs` passes; answers the elapsed milliseconds. */
export const eventually = async (check: () => Promise<boolean>, timeoutMs: number, everyMs = 50): Promise<number> => {
  const started = Date.now()
  for (;;) {
    if (await check()) return Date.now() - started
    if (Date.now() - started > timeoutMs) throw new Error(`Condition not met within ${timeoutMs} ms`)
    await new Promise((resolve) => setTimeout(resolve, everyMs))
  }
}
