/**
 * What a bot knows beyond the conversation: `search_documents` over the document store, and the
 * bot's long-term notes, `remember` and `recall`.
 *
 * Notes are documents, under the integration id `notes:<bot>` (or `notes:<bot>:<channel>` for a
 * channel's own): the document store already embeds, persists and searches them with the same
 * hybrid (vector + full-text) ranking, so notes need no second store, survive restarts, and an
 * operator can list or delete them through the documents API. `search_documents` never returns
 * notes; only their bot recalls them. It does return the documents added to this conversation in
 * the chat (a document's `session_id`), and never another conversation's.
 */
import { Effect, Schema } from "effect"
import { Documents } from "../../documents/Documents.ts"
import { type DocumentScope, MAX_SEARCH_LIMIT, type SearchResult } from "../../documents/Model.ts"
import type { ToolCallContext } from "../../sdk/index.ts"
import { ChoiceArgument, CountArgument, declareTool, NonBlankArgument, ToolFailure } from "../Tool.ts"

export const notesPrefix = "notes:"
const botNotes = (context: Pick<ToolCallContext, "botId">) => `${notesPrefix}${context.botId}`
const channelNotes = (context: Pick<ToolCallContext, "botId" | "channelId">) =>
  context.channelId ? `${notesPrefix}${context.botId}:${context.channelId}` : null

/** Integration ids searched one by one, their hits merged best first. */
const searchEach = (documents: Documents, q: string, integrationIds: ReadonlyArray<string>, limit: number, scope: DocumentScope) =>
  Effect.map(
    Effect.forEach(integrationIds, (integrationId) => documents.search({ q, integration_id: integrationId, limit, scope })),
    (found) => found.flat().sort((a, b) => b.score - a.score).slice(0, limit)
  )

/**
 * The documents a bot may see in a conversation, best first: those of the integrations named (all
 * when none) of no conversation or of this one (documents in the chat), never notes.
 */
export const searchDocumentsOnly = (
  documents: Documents,
  q: string,
  integrationIds: ReadonlyArray<string>,
  limit: number,
  sessionId: string
) => {
  const scope = { session: sessionId }
  const ids = integrationIds.filter((id) => !id.startsWith(notesPrefix))
  if (ids.length > 0) return searchEach(documents, q, ids, limit, scope)
  // Over-fetched so that notes, which are left out, do not shorten the answer.
  return Effect.map(
    documents.search({ q, limit: Math.min(limit * 3, MAX_SEARCH_LIMIT), scope }),
    (hits) => hits.filter((hit) => !hit.integration_id.startsWith(notesPrefix)).slice(0, limit)
  )
}

/** A bot's notes, and its channel's own, best first. */
export const searchNotes = (documents: Documents, q: string, owner: Pick<ToolCallContext, "botId" | "channelId">, limit: number) =>
  limit === 0
    ? Effect.succeed([])
    // Notes are the bot's (or its channel's) whatever conversation wrote them.
    : searchEach(documents, q, [botNotes(owner), channelNotes(owner)].filter((id): id is string => id !== null), limit, "all")

const listed = (hits: ReadonlyArray<SearchResult>, empty: string) =>
  hits.length === 0
    ? empty
    : hits
      .map((hit, index) => `[${index + 1}] ${hit.title} (${hit.integration_id}, score ${hit.score.toFixed(3)})\n${hit.snippet}`)
      .join("\n\n")

const LimitArgument = Schema.optional(CountArgument({ min: 1, max: 20 }))

export const memoryTools = Effect.gen(function*() {
  const documents = yield* Documents

  const searchDocuments = yield* declareTool({
    name: "search_documents",
    description:
      "Search the stored documents (hybrid semantic and full-text search); answers the best passages with their titles and sources.",
    effect: "read",
    parameters: Schema.Struct({
      query: Schema.String,
      integration_id: Schema.optional(Schema.String.annotations({ description: "Only documents stored by this integration" })),
      limit: LimitArgument
    }),
    success: Schema.String,
    handler: (args, context) =>
      Effect.gen(function*() {
        const integrationId = args.integration_id || undefined
        if (integrationId?.startsWith(notesPrefix)) {
          return yield* new ToolFailure({ message: "Notes are read with recall, not search_documents" })
        }
        const hits = yield* searchDocumentsOnly(
          documents,
          args.query,
          integrationId ? [integrationId] : [],
          args.limit ?? 5,
          context.sessionId
        )
        return listed(hits, "No document matches.")
      })
  })

  const remember = yield* declareTool({
    name: "remember",
    description:
      "Write a long-term note for yourself, kept across conversations (a fact, a preference, a decision). scope: bot (default, every conversation) or channel (this channel only).",
    effect: "write",
    parameters: Schema.Struct({
      note: NonBlankArgument(),
      title: Schema.optional(Schema.String.annotations({ description: "A short title; default: the note's start" })),
      scope: Schema.optional(ChoiceArgument("bot", "channel"))
    }),
    success: Schema.String,
    handler: (args, context) =>
      Effect.gen(function*() {
        const note = args.note.trim()
        const channel = channelNotes(context)
        if (args.scope === "channel" && !channel) {
          return yield* new ToolFailure({ message: "This conversation has no channel; remember with scope bot" })
        }
        const integrationId = args.scope === "channel" ? channel! : botNotes(context)
        const date = new Date().toISOString().slice(0, 10)
        const title = args.title?.trim() || note.split("\n", 1)[0]!.slice(0, 80)
        const stored = yield* documents.ingest({
          integration_id: integrationId,
          title: `${date}: ${title}`,
          content: note,
          // Not scoped to the conversation that wrote it (a note is for every one): where it was written is metadata.
          session_id: null,
          metadata: {
            kind: "note",
            bot_id: context.botId,
            channel_id: context.channelId,
            session_id: context.sessionId,
            written: new Date().toISOString()
          }
        })
        return `Remembered (${args.scope === "channel" ? "this channel" : "every conversation"}): note ${stored.id}`
      })
  })

  const recall = yield* declareTool({
    name: "recall",
    description: "Search your long-term notes (this bot's, and this channel's own) for what you wrote about something.",
    effect: "read",
    parameters: Schema.Struct({ query: Schema.String, limit: LimitArgument }),
    success: Schema.String,
    handler: (args, context) =>
      Effect.gen(function*() {
        const hits = yield* searchNotes(documents, args.query, context, args.limit ?? 5)
        return listed(hits, "No note matches.")
      })
  })

  return [searchDocuments, remember, recall]
})
