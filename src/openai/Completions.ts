/**
 * A chat completion as a bot's turn. Bound to a session (the `X-Cairn-Session` header or the
 * `user` field), it is a chat message like `/chat`'s: stored, run under the session's lock,
 * rejoinable. Without a binding it is stateless: the request's messages are the whole history,
 * the turn runs in memory beside the request and stores nothing but its usage.
 */
import { Cause, Deferred, Effect, Exit, Queue, type Scope, Stream } from "effect"
import { randomUUID } from "node:crypto"
import type { AgentEvent } from "../agent/Events.ts"
import { AgentLoop } from "../agent/Loop.ts"
import type { TurnResult } from "../agent/Turn.ts"
import type { PrincipalShape } from "../auth/Principal.ts"
import { Bots } from "../bots/Bots.ts"
import { Budgets } from "../budgets/Budgets.ts"
import { ValidationError } from "../contract/Errors.ts"
import { Memory } from "../health/Memory.ts"
import { Intake } from "../intake/Intake.ts"
import { userOf } from "../providers/Gate.ts"
import type { ToolSchema } from "../providers/Model.ts"
import { runFailureMessage, type RunOutcome, Runs } from "../runs/Runs.ts"
import { confinedBot, ownerOf, requireBotAllowed } from "../sessions/Access.ts"
import type { ImageAttachment } from "../sessions/Attachments.ts"
import { Sessions } from "../sessions/Sessions.ts"
import { SystemPaused } from "../settings/Model.ts"
import { Settings } from "../settings/Settings.ts"
import { traced } from "../telemetry/Spans.ts"
import { answerFormatExtra } from "./AnswerFormats.ts"
import { checkCallerTools, readConversation } from "./Conversation.ts"
import { modelNotFound, SessionBusy } from "./Errors.ts"
import type { ChatCompletionRequest } from "./Model.ts"

/** A started turn: its events until it ends, then its outcome. */
export interface CompletionTurn {
  readonly events: Stream.Stream<AgentEvent>
  readonly outcome: Effect.Effect<RunOutcome>
}

/**
 * An accepted completion. A bound one has started already (its refusals are HTTP errors); a
 * stateless one starts when `turn` runs, in the scope that should bound it (the request's, or the
 * streamed body's: a client that goes away stops it).
 */
export interface AcceptedCompletion {
  /** The bound session; null for a stateless call. */
  readonly sessionId: string | null
  /** The bound call's run; null for a stateless call. */
  readonly runId: string | null
  readonly turn: Effect.Effect<CompletionTurn, never, Scope.Scope>
}

/** `cairn/<id>` names the bot `<id>` as well as `<id>` does. */
export const botIdOf = (model: string) => (model.startsWith("cairn/") ? model.slice("cairn/".length) : model)

const busy = (reason: "session_busy" | "system_paused") =>
  new SessionBusy.Error({
    message: reason === "session_busy"
      ? "The session is answering another message; retry when it is done."
      : "The system is paused; retry when it is resumed.",
    type: "invalid_request_error",
    param: null,
    code: reason
  })

/** How a stateless turn ended, in the run engine's terms. */
const outcomeOf = (exit: Exit.Exit<TurnResult, unknown>) =>
  Effect.gen(function*() {
    if (Exit.isSuccess(exit)) return { _tag: "complete", result: exit.value } satisfies RunOutcome
    if (Cause.isInterruptedOnly(exit.cause)) {
      return { _tag: "interrupted", message: "The server stopped the turn before it finished" } satisfies RunOutcome
    }
    yield* Effect.logError("Stateless completion failed", exit.cause)
    return { _tag: "failed", message: runFailureMessage(exit.cause) } satisfies RunOutcome
  })

export class Completions extends Effect.Service<Completions>()("cairn/OpenAiCompletions", {
  effect: Effect.gen(function*() {
    const bots = yield* Bots
    const chat = yield* Intake
    const runs = yield* Runs
    const loop = yield* AgentLoop
    const settings = yield* Settings
    const sessions = yield* Sessions
    const budgets = yield* Budgets
    const memory = yield* Memory

    /** The bot a model names, when the caller may talk to it; else OpenAI's 404 (no hint which it was). */
    const botFor = (model: string, principal: PrincipalShape) =>
      bots.get(botIdOf(model)).pipe(
        Effect.tap((bot) => requireBotAllowed(principal, bot.id)),
        Effect.catchTags({
          BotNotFound: () => Effect.fail(modelNotFound(model)),
          Forbidden: () => Effect.fail(modelNotFound(model))
        })
      )

    /** The bots the caller may talk to: all of them, or a widget token's own. */
    const models = (principal: PrincipalShape) =>
      Effect.map(bots.list, (all) => {
        const confined = confinedBot(principal)
        return confined === null ? all : all.filter((bot) => bot.id === confined)
      })

    /** Checks the request and, when it is bound to a session, starts its turn there. */
    const accept = (request: ChatCompletionRequest, sessionHeader: string | undefined, principal: PrincipalShape) =>
      Effect.gen(function*() {
        const bot = yield* botFor(request.model, principal)
        const { history, input, preamble } = yield* readConversation(request.messages)
        if (input.toolResults.length === 0 && !input.text.trim() && input.images.length === 0) {
          return yield* ValidationError.single(
            ["body", "messages", request.messages.length - 1, "content"],
            "A message needs text or images",
            "missing"
          )
        }
        yield* chat.checkMessageLength(input.text, ["body", "messages", request.messages.length - 1, "content"])
        yield* checkCallerTools(request.tools ?? [])
        const llmExtra = yield* answerFormatExtra(request.response_format, "response_format")
        // A widget token speaks for a visitor of a public page: it gets no say in the bot's instructions.
        if (preamble && confinedBot(principal) !== null) {
          const index = request.messages.findIndex((message) => message.role === "system" || message.role === "developer")
          return yield* ValidationError.single(
            ["body", "messages", index, "role"],
            "A widget token cannot send system messages",
            "forbidden_role"
          )
        }
        // On this surface every client tool is the caller's to answer: OpenAI clients cannot post to /chat/tool_result.
        const callerTools: ReadonlyArray<ToolSchema> = (request.tools ?? []).map((tool) => ({
          type: "function",
          function: {
            name: tool.function.name,
            ...(tool.function.description !== undefined ? { description: tool.function.description } : {}),
            parameters: tool.function.parameters ?? { type: "object", properties: {} }
          }
        }))
        if (sessionHeader !== undefined || request.user !== undefined) {
          // Refused before anything is made: a paused system, or a session of another bot (which
          // `/chat` would move to this one; here two clients would move it back and forth).
          if (yield* settings.get(SystemPaused)) return yield* busy("system_paused")
          if (sessionHeader !== undefined) {
            const existing = yield* sessions.reach(principal, sessionHeader).pipe(
              Effect.catchTag("SessionNotFound", () => Effect.succeed(null))
            )
            if (existing && existing.bot_id !== bot.id) {
              return yield* ValidationError.single(
                ["header", "x-cairn-session"],
                `This session talks to the bot ${existing.bot_id}: name it as the model`,
                "session_bot"
              )
            }
          }
          const started = yield* chat.begin(
            {
              message: input.text,
              client_id: request.user ?? "openai",
              bot_id: bot.id,
              ...(sessionHeader !== undefined ? { session_id: sessionHeader } : {}),
              attachments: input.images,
              passive: false
            },
            principal,
            { callerTools, toolResults: input.toolResults, preamble, whenBusy: "refuse", ...(llmExtra ? { llmExtra } : {}) }
          )
          if (started._tag === "busy") return yield* busy(started.reason)
          if (started._tag !== "started") {
            return yield* Effect.dieMessage(`A completion cannot be ${started._tag}: it is never passive, voiced or queued`)
          }
          const turn: CompletionTurn = {
            events: runs.events(started.runId, 0).pipe(Stream.map((item) => item.event)),
            outcome: runs.awaitDone(started.run)
          }
          return { sessionId: started.sessionId, runId: started.runId, turn: Effect.succeed(turn) } satisfies AcceptedCompletion
        }
        if (yield* settings.get(SystemPaused)) return yield* busy("system_paused")
        // Short of memory, a stateless turn is refused as Intake refuses a bound one (503, Retry-After).
        yield* memory.admit
        // A spent budget refuses here, as /chat's turns are refused in Intake: a stream could not turn into a 429 later.
        yield* budgets.admit({ principalKind: principal.kind, principalId: principal.id, user: userOf(principal), botId: bot.id })
        // The limits of /chat's attachments, over every image the conversation sends the model.
        yield* chat.checkAttachments([
          ...history.flatMap((row) => (row.attachments ?? []) as ReadonlyArray<ImageAttachment>),
          ...input.images
        ])
        const turn = Effect.gen(function*() {
          const events = yield* Queue.unbounded<AgentEvent | null>()
          const done = yield* Deferred.make<RunOutcome>()
          yield* loop
            .runTurn({
              runId: randomUUID(),
              // A stateless turn has no stored session; this id only ties its log lines together.
              sessionId: randomUUID(),
              clientId: "openai",
              bot,
              channel: null,
              userText: input.toolResults.length > 0 ? null : input.text,
              attachments: input.images,
              principal: { kind: principal.kind, id: principal.id, caller: ownerOf(principal), user: userOf(principal) },
              history,
              callerTools,
              ...(llmExtra ? { llmExtra } : {}),
              ...(preamble ? { executionConfig: { system_preamble: preamble } } : {}),
              // A blocking call reads only the outcome: its events go nowhere.
              emit: request.stream ? (...batch) => Effect.asVoid(Queue.offerAll(events, batch)) : () => Effect.void
            })
            .pipe(
              Effect.exit,
              Effect.flatMap(outcomeOf),
              Effect.flatMap((outcome) => Deferred.succeed(done, outcome)),
              // The end marker comes after every event, so a reader sees them all.
              Effect.ensuring(Queue.offer(events, null)),
              Effect.forkScoped
            )
          return {
            events: Stream.fromQueue(events).pipe(
              Stream.takeWhile((event) => event !== null),
              Stream.filter((event): event is AgentEvent => event !== null)
            ),
            outcome: Deferred.await(done)
          } satisfies CompletionTurn
        })
        return { sessionId: null, runId: null, turn } satisfies AcceptedCompletion
      })

    return traced("Completions", { botFor, models, accept } as const)
  }),
  dependencies: [
    AgentLoop.Default,
    Bots.Default,
    Budgets.Default,
    Intake.Default,
    Memory.Default,
    Runs.Default,
    Sessions.Default,
    Settings.Default
  ]
}) {}
