/**
 * The secrets of an MCP server at rest and in answers: every env and header value is sealed with
 * a key derived from the server secret for this purpose alone (`secrets/Vault.ts`), and shown only
 * as `mask(value)` (`secrets/Mask.ts`), as provider keys are.
 */
import { Effect } from "effect"
import { MASK, mask } from "../secrets/Mask.ts"
import { makeKeyVaultFor } from "../secrets/Vault.ts"
import type { McpSource, McpTransport, UpdateMcpServer } from "./Model.ts"
import type { McpServerRecord, McpServerRow } from "./Repo.ts"

/** A server as the connection uses it: its secrets in clear (never shown, never logged). */
export interface OpenedServer {
  readonly name: string
  readonly transport: McpTransport
  readonly command: string | null
  readonly args: ReadonlyArray<string>
  readonly env: Readonly<Record<string, string>>
  readonly url: string | null
  readonly headers: Readonly<Record<string, string>>
  readonly enabled: boolean
  readonly timeoutMs: number
  readonly source: McpSource
  readonly createdAt: Date
  readonly updatedAt: Date
  /** Stored values the current server secret cannot decrypt (left out of `env` and `headers`). */
  readonly unreadable: ReadonlyArray<{ readonly field: "env" | "headers"; readonly name: string }>
}

export const makeSealing = Effect.map(makeKeyVaultFor("mcp-server-secrets"), (vault) => {
  const seal = (values: Readonly<Record<string, string>>): Record<string, string> =>
    Object.fromEntries(Object.entries(values).map(([name, value]) => [name, vault.encrypt(value)]))

  const openAll = (
    sealed: Readonly<Record<string, string>>,
    field: "env" | "headers",
    unreadable: Array<OpenedServer["unreadable"][number]>
  ) => {
    const open: Record<string, string> = {}
    for (const [name, stored] of Object.entries(sealed)) {
      const value = vault.decrypt(stored)
      if (value === undefined) unreadable.push({ field, name })
      else open[name] = value
    }
    return open
  }

  const open = (row: McpServerRow): OpenedServer => {
    const unreadable: Array<OpenedServer["unreadable"][number]> = []
    return {
      name: row.name,
      transport: row.transport,
      command: row.command,
      args: row.args,
      env: openAll(row.env_sealed, "env", unreadable),
      url: row.url,
      headers: openAll(row.headers_sealed, "headers", unreadable),
      enabled: row.enabled,
      timeoutMs: row.timeout_ms,
      source: row.source,
      createdAt: row.created_at,
      updatedAt: row.updated_at,
      unreadable
    }
  }

  /** What is stored for a server: its settings, env and header values (in clear here) sealed. */
  const record = (name: string, input: UpdateMcpServer, source: McpSource): McpServerRecord => ({
    name,
    transport: input.transport,
    command: input.transport === "stdio" ? (input.command ?? null) : null,
    args: input.transport === "stdio" ? input.args : [],
    env_sealed: seal(input.transport === "stdio" ? input.env : {}),
    url: input.transport === "http" ? (input.url ?? null) : null,
    headers_sealed: seal(input.transport === "http" ? input.headers : {}),
    enabled: input.enabled,
    timeout_ms: input.timeout_ms,
    source
  })

  return { open, record } as const
})

/** Whether a stored server already has exactly these settings (sealing differs each time, values do not). */
export const sameSettings = (stored: OpenedServer, input: UpdateMcpServer): boolean => {
  const same = (a: Readonly<Record<string, string>>, b: Readonly<Record<string, string>>) =>
    JSON.stringify(Object.entries(a).sort()) === JSON.stringify(Object.entries(b).sort())
  return (
    stored.unreadable.length === 0 &&
    stored.transport === input.transport &&
    stored.command === (input.command ?? null) &&
    JSON.stringify(stored.args) === JSON.stringify(input.args) &&
    same(stored.env, input.env) &&
    stored.url === (input.url ?? null) &&
    same(stored.headers, input.headers) &&
    stored.enabled === input.enabled &&
    stored.timeoutMs === input.timeout_ms
  )
}

/** Every value of a server that must never reach an answer or a log line. */
export const secretsOf = (server: OpenedServer): ReadonlyArray<string> => [...Object.values(server.env), ...Object.values(server.headers)]

/** A field's values as answers show them: each masked (one that cannot be decrypted as the bare mask). */
export const maskedField = (server: OpenedServer, field: "env" | "headers"): Record<string, string> => ({
  ...Object.fromEntries(Object.entries(server[field]).map(([name, value]) => [name, mask(value)])),
  ...Object.fromEntries(server.unreadable.filter((item) => item.field === field).map((item) => [item.name, MASK]))
})
