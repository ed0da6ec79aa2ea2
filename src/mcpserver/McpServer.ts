/**
 * Cairn as an MCP server: the tools (chat_with_bot, search_documents, list_bots) and the workspace
 * files as resources, each offered by the caller's scopes, served with the official SDK.
 *
 * Stateless: every POST gets a fresh SDK `Server` and transport, closed once it is answered, and no
 * `Mcp-Session-Id` is issued. Nothing an MCP host does needs state between requests here (a chat's
 * continuity is its Cairn session id, in the database), so any server process behind a load
 * balancer can answer any request; the database stays the only shared state.
 */
import type { ListResourcesResult, ReadResourceResult, Resource } from "@modelcontextprotocol/sdk/types.js"
import { Effect, Either } from "effect"
import { rateSubject } from "../access/Middleware.ts"
import { RateLimiter } from "../access/RateLimit.ts"
import { isText, sniffType } from "../attachments/FileTypes.ts"
import { grants, type Scope } from "../auth/Scopes.ts"
import { Bots } from "../bots/Bots.ts"
import { Channels } from "../channels/Channels.ts"
import { AppConfig } from "../config/AppConfig.ts"
import { cairnVersion } from "../contract/Version.ts"
import { Documents } from "../documents/Documents.ts"
import { Intake } from "../intake/Intake.ts"
import type { ChatRequest } from "../intake/Model.ts"
import { loadServerSdk, type ServerSdk } from "../mcp/Sdk.ts"
import { confinedBot, requireBotAllowed } from "../sessions/Access.ts"
import { tracedFn } from "../telemetry/Spans.ts"
import { Workspaces } from "../workspaces/Workspaces.ts"
import {
  ChatWithBotArguments,
  ChatWithBotResult,
  ListBotsArguments,
  ListBotsResult,
  parseWorkspaceFileUri,
  SearchDocumentsArguments,
  SearchDocumentsResult,
  workspaceFileTemplate,
  workspaceFileUri
} from "./Model.ts"
import { onRequest, ProtocolError, resourceNotFound, rpcErrorCode, type Runner, runner } from "./Protocol.ts"
import { answered, type AnyTool, type Caller, failureText, refused, tool } from "./Tools.ts"

export type { Caller } from "./Tools.ts"

/** The largest POST body read (the SDK answers 413 past it): far above any tool call. */
export const maxBodyBytes = 4 * 1024 * 1024

const workspaceScope: Scope = "workspaces.files:read"

export class McpServer extends Effect.Service<McpServer>()("cairn/McpServer", {
  effect: Effect.gen(function*() {
    const chat = yield* Intake
    const documents = yield* Documents
    const bots = yield* Bots
    const channels = yield* Channels
    const workspaces = yield* Workspaces
    const limiter = yield* RateLimiter
    const { defaultModel } = yield* AppConfig

    const chatWithBot = tracedFn(
      "McpServer.chatWithBot",
      (args: typeof ChatWithBotArguments.Type, caller: Caller) =>
        Effect.gen(function*() {
          // The turn is held to RATE_LIMIT_CHAT like /chat; the request itself was counted by the middleware.
          yield* limiter.checkChat(rateSubject(caller.principal, caller.address))
          const request: ChatRequest = {
            message: args.message,
            // One session per (caller, bot) unless a session is named, as /chat does per client_id.
            client_id: "mcp",
            bot_id: args.bot,
            session_id: args.session,
            attachments: [],
            passive: false
          }
          const answer = yield* chat.answer(request, caller.principal)
          return answered(
            answer.text,
            { response: answer.text, session_id: answer.sessionId },
            `session_id: ${answer.sessionId} (pass it as "session" to continue this conversation)`
          )
        })
    )

    const searchDocuments = tracedFn("McpServer.searchDocuments", (args: typeof SearchDocumentsArguments.Type) =>
      Effect.gen(function*() {
        const hits = yield* documents.search({ q: args.query, limit: args.limit, integration_id: args.integration_id })
        const results = hits.map((hit) => ({
          id: hit.id,
          title: hit.title,
          integration_id: hit.integration_id,
          session_id: hit.session_id,
          metadata: hit.metadata,
          score: hit.score,
          similarity: hit.similarity,
          snippet: hit.snippet
        }))
        return answered(JSON.stringify({ results }, null, 2), { results })
      }))

    const listBots = tracedFn("McpServer.listBots", (caller: Caller) =>
      Effect.gen(function*() {
        const only = confinedBot(caller.principal)
        const list = (yield* bots.list).filter((bot) => only === null || bot.id === only)
        const summaries = list.map((bot) => ({
          id: bot.id,
          name: bot.name,
          description: bot.description,
          model: bot.model ?? defaultModel
        }))
        return answered(JSON.stringify({ bots: summaries }, null, 2), { bots: summaries })
      }))

    const tools: ReadonlyArray<AnyTool> = [
      tool({
        name: "chat_with_bot",
        title: "Chat with a Cairn bot",
        description: "Send a message to one of Cairn's bots and get its answer once its turn (tools included) has finished. " +
          "The answer names the session_id; pass it as `session` to continue the same conversation",
        scope: "chat",
        input: ChatWithBotArguments,
        output: ChatWithBotResult,
        readOnly: false,
        run: chatWithBot
      }),
      tool({
        name: "search_documents",
        title: "Search Cairn's documents",
        description:
          "Search the documents stored in Cairn (semantic and full-text, fused): the best hits with their score, similarity, source (integration_id) and best passage",
        scope: "documents:read",
        input: SearchDocumentsArguments,
        output: SearchDocumentsResult,
        readOnly: true,
        run: (args) => searchDocuments(args)
      }),
      tool({
        name: "list_bots",
        title: "List Cairn's bots",
        description: "The bots this key may talk to, with their id (for chat_with_bot), name, description and model",
        scope: "bots:read",
        input: ListBotsArguments,
        output: ListBotsResult,
        readOnly: true,
        run: (_args, caller) => listBots(caller)
      })
    ]

    const listTools = (caller: Caller) =>
      Effect.succeed({ tools: tools.filter((t) => grants(caller.principal.scopes, t.scope)).map((t) => t.declaration) })

    const callTool = tracedFn("McpServer.callTool", (caller: Caller, name: string, args: unknown) =>
      Effect.gen(function*() {
        yield* Effect.annotateCurrentSpan("mcp.tool", name)
        const found = tools.find((t) => t.name === name)
        if (!found) return yield* new ProtocolError({ code: rpcErrorCode.invalidParams, message: `Unknown tool: ${name}` })
        // A tool not listed for this key is refused as the REST route would be: by the scope it lacks.
        if (!grants(caller.principal.scopes, found.scope)) return refused(`Missing required scope: ${found.scope} (${name} needs it)`)
        return yield* found.call(args, caller)
      }))

    /** Channels read per page of resources/list; each page lists the files of the enabled workspaces among them. */
    const channelsPerPage = 50

    const listResources = tracedFn("McpServer.listResources", (caller: Caller, cursor: string | undefined) =>
      Effect.gen(function*() {
        if (!grants(caller.principal.scopes, workspaceScope)) return { resources: [] } satisfies ListResourcesResult
        const offset = cursor === undefined ? 0 : Number(cursor)
        if (!/^\d{1,15}$/.test(cursor ?? "0") || !Number.isSafeInteger(offset)) {
          return yield* new ProtocolError({ code: rpcErrorCode.invalidParams, message: "Invalid cursor" })
        }
        const page = yield* channels.list({ bot_id: confinedBot(caller.principal) ?? undefined, limit: channelsPerPage, offset })
        const resources: Array<Resource> = []
        for (const channel of page) {
          if (!channel.workspace_enabled) continue
          // Deleted or switched off since the page was read: nothing to list.
          const listing = yield* workspaces.list(channel.id).pipe(
            Effect.catchTags({ ChannelNotFound: () => Effect.succeed(null), WorkspaceConflict: () => Effect.succeed(null) })
          )
          for (const file of listing?.files ?? []) {
            resources.push({
              uri: workspaceFileUri(channel.id, file.path),
              name: file.path,
              title: `${channel.name}: ${file.path}`,
              size: file.size,
              annotations: { lastModified: file.modified_at.toISOString() }
            })
          }
        }
        return (page.length === channelsPerPage
          ? { resources, nextCursor: String(offset + channelsPerPage) }
          : { resources }) satisfies ListResourcesResult
      }))

    const listResourceTemplates = (caller: Caller) =>
      Effect.succeed({
        resourceTemplates: grants(caller.principal.scopes, workspaceScope)
          ? [
            {
              uriTemplate: workspaceFileTemplate,
              name: "workspace-file",
              title: "Channel workspace file",
              description: "A file in a channel's workspace (the channel's workspace must be enabled); path segments percent-encoded"
            }
          ]
          : []
      })

    const readResource = tracedFn("McpServer.readResource", (caller: Caller, uri: string) =>
      Effect.gen(function*() {
        if (!grants(caller.principal.scopes, workspaceScope)) {
          return yield* new ProtocolError({ code: rpcErrorCode.invalidRequest, message: `Missing required scope: ${workspaceScope}` })
        }
        const named = parseWorkspaceFileUri(uri)
        if (Either.isLeft(named)) return yield* new ProtocolError({ code: rpcErrorCode.invalidParams, message: named.left })
        const { channelId, path } = named.right
        const notFound = (message: string) => new ProtocolError({ code: resourceNotFound, message })
        // The workspace's own path rules (no '..', no absolute path, no link leading out) decide what is readable.
        const file = yield* Effect.gen(function*() {
          const channel = yield* channels.get(channelId)
          yield* requireBotAllowed(caller.principal, channel.bot_id)
          return yield* workspaces.readBytes(channelId, path)
        }).pipe(
          Effect.catchTags({
            ChannelNotFound: (error) => Effect.fail(notFound(error.detail)),
            WorkspaceFileNotFound: (error) => Effect.fail(notFound(error.detail)),
            WorkspaceConflict: (error) => Effect.fail(new ProtocolError({ code: rpcErrorCode.invalidRequest, message: error.detail })),
            Forbidden: (error) => Effect.fail(new ProtocolError({ code: rpcErrorCode.invalidRequest, message: error.detail })),
            ValidationError: (error) =>
              Effect.fail(new ProtocolError({ code: rpcErrorCode.invalidParams, message: `Invalid path: ${failureText(error)}` }))
          })
        )
        const type = file.bytes.byteLength === 0 ? "text/plain" : (sniffType(file.bytes, file.rel) ?? "application/octet-stream")
        const canonical = workspaceFileUri(channelId, file.rel)
        return {
          contents: [
            isText(type)
              ? { uri: canonical, mimeType: type, text: Buffer.from(file.bytes).toString("utf8") }
              : { uri: canonical, mimeType: type, blob: Buffer.from(file.bytes).toString("base64") }
          ]
        } satisfies ReadResourceResult
      }))

    /** The SDK server for one request: what it offers is fixed by this caller's scopes. */
    const serverFor = (sdk: ServerSdk, caller: Caller, run: Runner) => {
      const server = new sdk.server.Server(
        { name: "cairn", title: "Cairn", version: cairnVersion },
        {
          capabilities: { tools: {}, resources: {} },
          instructions:
            "Cairn hosts LLM bots and a document store. list_bots names the bots; chat_with_bot talks to one (keep its session_id to continue); " +
            "search_documents searches the documents; channel workspace files are resources (cairn://workspaces/{channel_id}/{path})."
        }
      )
      onRequest(sdk, server, sdk.types.ListToolsRequestSchema, (_request, extra) => run(listTools(caller), extra.signal))
      onRequest(
        sdk,
        server,
        sdk.types.CallToolRequestSchema,
        (request, extra) => run(callTool(caller, request.params.name, request.params.arguments), extra.signal)
      )
      onRequest(
        sdk,
        server,
        sdk.types.ListResourcesRequestSchema,
        (request, extra) => run(listResources(caller, request.params?.cursor), extra.signal)
      )
      onRequest(
        sdk,
        server,
        sdk.types.ListResourceTemplatesRequestSchema,
        (_request, extra) => run(listResourceTemplates(caller), extra.signal)
      )
      onRequest(
        sdk,
        server,
        sdk.types.ReadResourceRequestSchema,
        (request, extra) => run(readResource(caller, request.params.uri), extra.signal)
      )
      return server
    }

    /**
     * Answers one HTTP request to `/mcp` (a web `Request`, already authenticated) with a fresh
     * server and transport; they are closed when it is answered or the client goes away, which
     * interrupts whatever its handlers still run.
     */
    const handle = tracedFn("McpServer.handle", (request: Request, caller: Caller) =>
      Effect.gen(function*() {
        const sdk = yield* Effect.promise(loadServerSdk)
        const run = runner(yield* Effect.runtime<never>(), sdk)
        const server = serverFor(sdk, caller, run)
        const transport = new sdk.transport.WebStandardStreamableHTTPServerTransport({
          sessionIdGenerator: undefined,
          enableJsonResponse: true,
          maxRequestBodySize: maxBodyBytes
        })
        return yield* Effect.acquireUseRelease(
          Effect.promise(() => server.connect(transport)),
          () => Effect.promise(() => transport.handleRequest(request)),
          () => Effect.promise(() => server.close())
        )
      }))

    return { handle, listTools, callTool, listResources, readResource } as const
  }),
  dependencies: [Intake.Default, Documents.Default, Bots.Default, Channels.Default, Workspaces.Default, RateLimiter.Default]
}) {}
