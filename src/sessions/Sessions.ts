/** Sessions: the conversation a client has with a bot, and its stored messages. */
import { Effect } from "effect"
import type { PrincipalShape } from "../auth/Principal.ts"
import { Bots } from "../bots/Bots.ts"
import { BotNotFound } from "../bots/Errors.ts"
import { Forbidden, ValidationError } from "../contract/Errors.ts"
import { isUuid } from "../contract/Params.ts"
import { makeDispatchSecrets, maskDispatchConfig } from "../secrets/DispatchConfig.ts"
import { traced } from "../telemetry/Spans.ts"
import { mayReach, ownerOf, owns, reachesEverySession, requireBotAllowed, requireReach } from "./Access.ts"
import { branchMethods } from "./Branches.ts"
import { SessionBranchesRepo } from "./BranchRepo.ts"
import { SessionNotFound } from "./Errors.ts"
import { makeHistoryCache, wholeRead } from "./History.ts"
import { Message, type NewMessage, Session, SessionMatch, SessionWithMessages, type UpdateSessionState } from "./Model.ts"
import { type MessageRow, type SessionRow, SessionsRepo } from "./Repo.ts"

// Rows were decoded by the repository's schemas (or written from checked values), and a response
// encodes through the class's schema again: validating here too cost every turn its share of CPU.
export const toSession = (row: SessionRow) => new Session({ ...row, last_active: row.updated_at }, true)

/** A session as a response shows it: dispatch secrets masked. */
export const shownSession = (session: Session): Session =>
  new Session({ ...session, dispatch_config: maskDispatchConfig(session.dispatch_config) })
export const toMessage = (row: MessageRow) =>
  new Message({ ...row, content: row.content ?? "", tool_calls: (row.tool_calls as Message["tool_calls"]) ?? null }, true)

/**
 * Sessions whose recent history a process holds: 50 open conversations at the default 200 messages
 * of a few hundred characters are some 5 MB; a window larger than a quarter of the budget is read
 * every time instead.
 */
const historyCacheSize = { sessions: 256, chars: 8_000_000 }

/** A session's summaries: its transcript to summarise, the versions stored, the current one. */
const summaryMethods = (
  repo: SessionsRepo,
  history: ReturnType<typeof makeHistoryCache>,
  reach: (principal: PrincipalShape, id: string) => Effect.Effect<unknown, SessionNotFound | Forbidden>,
  notFound: (id: string) => SessionNotFound
) => {
  /** Every message's seq, role and text, for a summary (the caller has read the session). */
  const transcript = (id: string, range?: { readonly after?: number; readonly through?: number }) => repo.transcript(id, range)

  /** Stores the session's next summary version (see the repository). */
  const setSummary = (
    id: string,
    summary: string,
    range: { readonly from: number; readonly through: number },
    trigger: "summarize" | "compaction" | "admin"
  ) =>
    Effect.flatMap(repo.setSummary(id, summary, range.from, range.through, trigger), (stored) => {
      // A new summary starts another window (a read would see it too; this saves the read's miss).
      history.forget(id)
      return stored ? Effect.succeed(stored) : Effect.fail(notFound(id))
    })

  const summaries = (principal: PrincipalShape, id: string) => Effect.zipRight(reach(principal, id), repo.summaries(id))

  /** The session's current summary and what it covers. */
  const currentSummary = (id: string) => repo.currentSummary(id)

  return { transcript, setSummary, summaries, currentSummary } as const
}

/** What a list of sessions is filtered by. */
interface ListFilter {
  readonly botId?: string | undefined
  readonly clientId?: string | undefined
  readonly limit?: number | undefined
  readonly archived?: boolean | undefined
  /** Only the caller's own, even for a caller that reaches every session. */
  readonly mine?: boolean | undefined
}

/** The sessions the caller reaches, pinned first, then most recently active. */
const listSessions = (repo: SessionsRepo, principal: PrincipalShape | null, filter: ListFilter) =>
  Effect.map(
    repo.list({
      ...(filter.botId !== undefined ? { botId: filter.botId } : {}),
      ...(filter.clientId !== undefined ? { clientId: filter.clientId } : {}),
      ...(filter.archived !== undefined ? { archived: filter.archived } : {}),
      ...(principal && (filter.mine === true || !reachesEverySession(principal)) ? { owner: ownerOf(principal) } : {}),
      limit: filter.limit ?? 100
    }),
    // A widget's sessions are all on its bot; the filter keeps a switched one out all the same.
    (rows) => rows.filter((row) => principal === null || mayReach(principal, row)).map(toSession)
  )

/** The messages a run writes: while it runs, and with its end. */
const runMessages = (repo: SessionsRepo, history: ReturnType<typeof makeHistoryCache>) => ({
  /**
   * Stores a message of a running run only while that run is running (`SessionsRepo.appendForRun`):
   * whether it was stored. `durable: false` commits relaxed.
   */
  appendForRun: (sessionId: string, message: NewMessage, runId: string, options: { readonly durable?: boolean } = {}) =>
    Effect.map(repo.appendForRun(sessionId, message, runId, options.durable === false), (stored) => {
      if (stored) history.extend(sessionId, message, stored)
      return stored !== null
    }),
  /**
   * What storing a message writes, for a statement that commits it with its own (a turn's answer
   * with its run's end; with a `gate`, the message that starts a run with its lock): nothing is
   * written until that statement runs.
   */
  appendWrites: (sessionId: string, message: NewMessage, gate?: string) =>
    repo.appendWrites(sessionId, message, (stored) => stored && history.extend(sessionId, message, stored), gate)
})

export class Sessions extends Effect.Service<Sessions>()("cairn/Sessions", {
  effect: Effect.gen(function*() {
    const repo = yield* SessionsRepo
    const branchRepo = yield* SessionBranchesRepo
    const bots = yield* Bots
    const secrets = yield* makeDispatchSecrets
    // Rows an older release stored with a URL credential in the clear are sealed once, here.
    yield* repo.resealDispatchConfigs(secrets.seal)

    const notFound = (id: string) => new SessionNotFound({ detail: `Session not found: ${id}` })
    const history = makeHistoryCache(historyCacheSize)

    // A bot the client names that does not exist is a 404, as the companion clients expect.
    const requireBot = (botId: string) => Effect.mapError(bots.get(botId), () => new BotNotFound({ detail: `Unknown bot: ${botId}` }))

    const findRow = (id: string) =>
      isUuid(id)
        ? Effect.flatMap(repo.find(id), (row) => (row ? Effect.succeed(row) : Effect.fail(notFound(id))))
        : Effect.fail(notFound(id))

    const get = (id: string) => Effect.map(findRow(id), toSession)

    /** The session, when the caller reaches it (403 otherwise; see Access.ts). */
    const reach = (principal: PrincipalShape, id: string) =>
      Effect.flatMap(findRow(id), (row) => Effect.as(requireReach(principal, row), toSession(row)))

    /** The session, when the caller owns it (Access.ts `owns`): 403 otherwise, even to a caller that reaches it. */
    const own = (principal: PrincipalShape, id: string) =>
      Effect.flatMap(findRow(id), (row) =>
        owns(principal, row)
          ? Effect.succeed(toSession(row))
          : Effect.fail(new Forbidden({ detail: "This conversation belongs to another user" })))

    /**
     * Idempotent per (client_id, bot_id): creates the session or returns the existing one. A caller
     * that does not reach every session has its own (client_id, bot_id) sessions, so a client id
     * another caller chose is never a way into that caller's conversation.
     */
    const getOrCreate = (input: {
      readonly botId: string
      readonly clientId: string
      readonly dispatchConfig?: Record<string, unknown> | undefined
      readonly channelId?: string | null
      /** The caller; none for sessions the server makes itself. */
      readonly principal?: PrincipalShape | undefined
    }) =>
      Effect.gen(function*() {
        const { principal } = input
        if (principal) yield* requireBotAllowed(principal, input.botId)
        const owner = principal ? ownerOf(principal) : null
        const key = principal && !reachesEverySession(principal)
          ? `${input.clientId}\u0001${input.botId}\u0001${owner}`
          : `${input.clientId}\u0001${input.botId}`
        const existing = yield* repo.findDefault(key)
        if (existing) return toSession(existing)
        yield* requireBot(input.botId)
        // Tokens in a dispatch_config are stored sealed, like a task's (responses mask them).
        const sealed = secrets.seal(input.dispatchConfig ?? {})
        return toSession(yield* repo.getOrCreateDefault(key, input.clientId, input.botId, sealed, input.channelId ?? null, owner))
      })

    /** A session under an id the client chose; created on first use, owned by its creator. */
    const getOrCreateWithId = (principal: PrincipalShape, id: string, clientId: string, botId: string, channelId: string | null) =>
      Effect.gen(function*() {
        if (!isUuid(id)) return yield* ValidationError.single(["body", "session_id"], "Expected a UUID")
        const existing = yield* repo.find(id)
        if (existing) return yield* Effect.as(requireReach(principal, existing), toSession(existing))
        yield* requireBotAllowed(principal, botId)
        yield* requireBot(botId)
        const row = yield* repo.createWithId(id, clientId, botId, channelId, ownerOf(principal))
        // Two callers creating the same id at once: the one that lost the insert reaches it only if it owns it.
        return yield* Effect.as(requireReach(principal, row), toSession(row))
      })

    /** Moves a session to another bot (a client's "switch bot"); its history stays. */
    const switchBot = (id: string, botId: string) =>
      Effect.gen(function*() {
        yield* requireBot(botId)
        const row = yield* repo.setBot(id, botId)
        if (!row) return yield* notFound(id)
        return toSession(row)
      })

    const setTitle = (principal: PrincipalShape, id: string, title: string) =>
      Effect.gen(function*() {
        yield* reach(principal, id)
        const row = yield* repo.setTitle(id, title)
        if (!row) return yield* notFound(id)
        return toSession(row)
      })

    /** A user's edit of their conversation: its title, pinned, archived, its own settings (only what is sent changes). */
    const update = (principal: PrincipalShape, id: string, change: UpdateSessionState) =>
      Effect.gen(function*() {
        yield* reach(principal, id)
        if (change.title !== undefined && !(yield* repo.setTitle(id, change.title))) return yield* notFound(id)
        const { model, system_prompt, temperature } = change
        if (model !== undefined || system_prompt !== undefined || temperature !== undefined) {
          yield* branches.configure(id, { model, system_prompt, temperature })
        }
        const row = yield* repo.setState(id, { pinned: change.pinned, archived: change.archived })
        if (!row) return yield* notFound(id)
        return toSession(row)
      })

    /** The caller's conversations whose title or messages match `text`, pinned first, then the most recently active. */
    const search = (principal: PrincipalShape, text: string, limit: number) =>
      Effect.map(
        repo.search(text, { ...(reachesEverySession(principal) ? {} : { owner: ownerOf(principal) }), limit }),
        (rows) =>
          rows.filter((row) => mayReach(principal, row)).map(({ snippet, ...row }) =>
            new SessionMatch({ session: shownSession(toSession(row)), snippet }, true)
          )
      )

    const messages = (principal: PrincipalShape, id: string) =>
      Effect.gen(function*() {
        yield* reach(principal, id)
        return (yield* repo.messages(id)).map(toMessage)
      })

    const branches = branchMethods({ repo: branchRepo, reach, messages, requireBot, toSession, notFound })

    /** A channel's conversation, for callers the channel's own scopes let in (no owner check here). */
    const channelMessages = (id: string, limit: number) => Effect.map(repo.latestMessages(id, limit), (rows) => rows.map(toMessage))

    const withMessages = (principal: PrincipalShape, id: string) =>
      Effect.gen(function*() {
        const session = yield* reach(principal, id)
        const list = (yield* repo.messages(id)).map(toMessage)
        return new SessionWithMessages({ ...session, dispatch_config: maskDispatchConfig(session.dispatch_config), messages: list })
      })

    const list = (principal: PrincipalShape | null, filter: ListFilter) => listSessions(repo, principal, filter)

    const remove = (principal: PrincipalShape, id: string) =>
      Effect.gen(function*() {
        yield* reach(principal, id)
        if (!(yield* repo.remove(id))) return yield* notFound(id)
        history.forget(id)
      })

    /**
     * The newest `limit` messages after the session's summary, oldest first: only what was added
     * since the last read is fetched, and the window is read whole when the count says something
     * else changed, and not at all right after a message stored here extended it (see History.ts).
     */
    const recent = (sessionId: string, limit: number) =>
      Effect.suspend(() => {
        const known = history.current(sessionId, limit)
        if (known !== undefined) return Effect.succeed(known)
        const read = history.plan(sessionId, limit)
        return Effect.flatMap(repo.historySince(sessionId, read, limit), (slice) => {
          const rows = history.settle(sessionId, limit, read, slice)
          if (rows !== undefined) return Effect.succeed(rows)
          return Effect.map(repo.historySince(sessionId, wholeRead, limit), (whole) => history.settle(sessionId, limit, wholeRead, whole)!)
        })
      })

    /** Stores a message; `durable: false` commits relaxed (see db/Commit.ts). */
    const append = (sessionId: string, message: NewMessage, options: { readonly durable?: boolean } = {}) =>
      Effect.map(repo.append(sessionId, message, options.durable === false), ({ row, stored }) => {
        if (stored) history.extend(sessionId, message, stored)
        return toMessage(row)
      })

    return traced(
      "Sessions",
      {
        get,
        reach,
        own,
        getOrCreate,
        getOrCreateWithId,
        switchBot,
        setTitle,
        update,
        ...branches,
        search,
        ...summaryMethods(repo, history, reach, notFound),
        messages,
        channelMessages,
        withMessages,
        list,
        remove,
        append,
        ...runMessages(repo, history),
        recent
      } as const
    )
  }),
  dependencies: [SessionsRepo.Default, SessionBranchesRepo.Default, Bots.Default]
}) {}
