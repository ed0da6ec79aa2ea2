/**
 * Where each piece of a turn's context came from. `owner`: the bot's configuration, its skills,
 * the operator's own tools; `user`: the authenticated caller of the turn (a key, a signed-in user,
 * the account owner on the bridge); `external`: text anyone else could have written (a mail, a
 * stranger's bridge message, an integration's webhook delivery, a fetched page, an ingested
 * document, an MCP tool's answer, a workspace file an integration wrote under `data/`).
 *
 * The origin is derived where content enters (a stored message's metadata, a tool's result) and
 * stored with the message, so the policy (ToolStep) reads it from the history, whatever the model
 * says about it. This file is part of the browser-safe contract: it imports only `effect`.
 */
import { Schema } from "effect"

export const ExternalSource = Schema.Literal("mail", "bridge", "webhook", "integration", "web", "document", "mcp", "workspace")
export type ExternalSource = typeof ExternalSource.Type

export const Origin = Schema.Union(
  Schema.Struct({ kind: Schema.Literal("owner", "user") }),
  Schema.Struct({
    kind: Schema.Literal("external"),
    source: ExternalSource,
    /** Which one: the integration, the MCP server, the host, the file. */
    detail: Schema.optional(Schema.String)
  })
).annotations({ description: "Where a message's content came from: owner, user, or external with its source" })
export type Origin = typeof Origin.Type
export type ExternalOrigin = Extract<Origin, { readonly kind: "external" }>

export const ownerOrigin: Origin = { kind: "owner" }
export const userOrigin: Origin = { kind: "user" }
const external = (source: ExternalSource, detail?: string): ExternalOrigin => (detail ? { kind: "external", source, detail } : {
  kind: "external",
  source
})

export const isExternal = (origin: Origin | null | undefined): origin is ExternalOrigin => origin?.kind === "external"

const decodeOrigin = Schema.decodeUnknownOption(Origin)

/** A stored origin (jsonb, possibly as text); None for a row stored before origins were kept. */
export const storedOrigin = (value: unknown): Origin | undefined => {
  const parsed = typeof value === "string" ? safeJson(value) : value
  const decoded = decodeOrigin(parsed)
  return decoded._tag === "Some" ? decoded.value : undefined
}

const safeJson = (text: string): unknown => {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

/**
 * An injected message's origin, from what the injection says of itself: an integration names
 * itself in `source` (`integration:<id>`, set by the server, not by the integration); the bridge
 * says who sent it (`sender: "me"` is the account owner). An API caller's injection is its own
 * (`user`), unless its source names an outside channel, which can only make it stricter.
 */
export const injectionOrigin = (source: string, metadata: Readonly<Record<string, unknown>> = {}): Origin => {
  const lower = source.toLowerCase()
  if (lower.startsWith("integration:")) {
    const id = source.slice("integration:".length)
    if (id === "msgbridge") return metadata.sender === "me" ? userOrigin : external("bridge", stringOf(metadata.chat_guid))
    if (id === "mailbox") return external("mail")
    return external("integration", id)
  }
  if (/^(webhook|hook)\b/.test(lower)) return external("webhook", source)
  if (/^(mail|email|imap)\b/.test(lower)) return external("mail")
  if (/^(msgbridge|bridge|imessage)\b/.test(lower)) return external("bridge")
  return userOrigin
}

const stringOf = (value: unknown) => (typeof value === "string" && value ? value : undefined)

/** Where integrations put what they receive in a channel's workspace (the mailbox's mails, for one). */
export const integrationFolder = "data/"

const normalPath = (path: unknown) => (typeof path === "string" ? path.replace(/\\/g, "/").replace(/^[./]+/, "") : "")

/** The tool a result came from, as the policy knows it. */
export interface ResultSource {
  readonly name: string
  /** The registry's source: "core", "integration:<id>", "mcp:<server>", "workflow:<id>"; undefined for client tools and delegation. */
  readonly source: string | undefined
  readonly args: Readonly<Record<string, unknown>>
  readonly result: string
}

/**
 * A tool result's origin: what the tool brought in from outside is `external`; what Cairn itself
 * keeps for the owner (notes, todos, the time, a workflow run) is `owner`. The workspace is the
 * user's except under `data/`, where integrations write (a search or a listing reaching into it
 * counts as reading it).
 */
export const resultOrigin = ({ args, name, result, source }: ResultSource): Origin => {
  if (source?.startsWith("mcp:")) return external("mcp", source.slice(4))
  if (source?.startsWith("integration:")) return external("integration", source.slice("integration:".length))
  switch (name) {
    case "fetch_url":
      return external("web", hostOf(args.url))
    case "search_documents":
      return external("document", stringOf(args.integration_id))
    case "read_file":
      return normalPath(args.path).startsWith(integrationFolder) ? external("workspace", normalPath(args.path)) : userOrigin
    case "list_files":
    case "search_files":
      return result.split("\n").some((line) => line.startsWith(integrationFolder)) ? external("workspace", integrationFolder) : userOrigin
  }
  return source === undefined ? userOrigin : ownerOrigin
}

const hostOf = (url: unknown) => {
  try {
    return typeof url === "string" ? new URL(url).host : undefined
  } catch {
    return undefined
  }
}

/** The distinct external origins among these, in the order first met (what an approval names). */
export const externalOrigins = (origins: Iterable<Origin | null | undefined>): Array<ExternalOrigin> => {
  const seen = new Map<string, ExternalOrigin>()
  for (const origin of origins) {
    if (!isExternal(origin)) continue
    const key = `${origin.source}:${origin.detail ?? ""}`
    if (!seen.has(key)) seen.set(key, origin)
  }
  return [...seen.values()]
}

/** An origin in a few words, for a person deciding an approval: `external: mail`, `external: web (example.com)`. */
export const describeOrigin = (origin: Origin): string =>
  origin.kind === "external" ? `external: ${origin.source}${origin.detail ? ` (${origin.detail})` : ""}` : origin.kind
