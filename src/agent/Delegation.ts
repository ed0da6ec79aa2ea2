/**
 * Delegation: a bot with `delegate_bots` gets a tool to hand a question to one of them. The other
 * bot answers in a session of its own (one per delegating session), and its answer comes back as
 * the tool's result; the caller's stream says `delegation_post {target_bot}`. The answer is also
 * posted where the conversation is (spec: `post_message` "is used for delegation"), through the
 * dispatcher that reaches it and shown as the bot that answered: see `DelegationOutlets`.
 */
import { Effect } from "effect"
import { Bots } from "../bots/Bots.ts"
import type { ToolSchema } from "../providers/Model.ts"
import { Sessions } from "../sessions/Sessions.ts"
import { traced } from "../telemetry/Spans.ts"
import type { TurnInput, TurnResult } from "./Turn.ts"

export const delegateToolName = "delegate_to_bot"

export const delegateToolSchema = (allowed: ReadonlyArray<string>): ToolSchema => ({
  type: "function",
  function: {
    name: delegateToolName,
    description: `Ask another bot to handle a request and return its answer. Bots you may ask: ${allowed.join(", ")}.`,
    parameters: {
      type: "object",
      properties: {
        bot_id: { type: "string", enum: [...allowed], description: "The bot to ask" },
        message: { type: "string", description: "What to ask it, with the context it needs" }
      },
      required: ["bot_id", "message"]
    }
  }
})

/** Nested delegation stops here, so two bots cannot ask each other forever. */
export const maxDelegationDepth = 2

/**
 * A dispatch: a registered dispatch type and its config (possibly sealed); `clientId` names the
 * conversation when a channel's binding gave it (its integration's display-name resolver reads it).
 */
export interface Destination extends NonNullable<TurnInput["dispatch"]> {
  readonly clientId?: string | undefined
}

/** Where a delegated answer goes and what it says. */
export interface DelegatedPost {
  readonly destination: Destination
  readonly text: string
  /** The bot that answered, and the one that asked. */
  readonly bot: { readonly id: string; readonly name: string }
  readonly askedBy: string
  readonly sessionId: string
}

/** How delegated answers reach a conversation; the delivery layer implements it (tasks/delivery/Delegated.ts). */
export interface DelegationOutlet {
  /** Where messages for the turn's conversation go; undefined when nowhere. */
  readonly destination: (turn: TurnInput) => Effect.Effect<Destination | undefined>
  /** Posts through the destination's dispatcher; answers whether it was posted. */
  readonly post: (post: DelegatedPost) => Effect.Effect<boolean>
}

/**
 * The outlet of delegated answers, installed once at startup by the delivery layer: dispatchers
 * and bindings live above the agent, which cannot import them. Until one is installed, nothing is posted.
 */
export class DelegationOutlets extends Effect.Service<DelegationOutlets>()("cairn/DelegationOutlets", {
  sync: () => {
    let installed: DelegationOutlet | undefined
    return {
      install: (outlet: DelegationOutlet) => Effect.sync(() => void (installed = outlet)),
      destination: (turn: TurnInput): Effect.Effect<Destination | undefined> =>
        installed ? installed.destination(turn) : Effect.succeed(undefined),
      post: (post: DelegatedPost): Effect.Effect<boolean> => (installed ? installed.post(post) : Effect.succeed(false))
    }
  }
}) {}

export class Delegation extends Effect.Service<Delegation>()("cairn/Delegation", {
  effect: Effect.gen(function*() {
    const bots = yield* Bots
    const sessions = yield* Sessions
    const outlets = yield* DelegationOutlets

    const delegate = (request: {
      readonly parent: TurnInput
      readonly args: Record<string, unknown>
      readonly allowed: ReadonlyArray<string>
      readonly runTurn: (input: TurnInput) => Effect.Effect<TurnResult, unknown>
    }): Effect.Effect<string> =>
      Effect.gen(function*() {
        const target = typeof request.args.bot_id === "string" ? request.args.bot_id : ""
        const message = typeof request.args.message === "string" ? request.args.message : ""
        if (!request.allowed.includes(target)) return `Error: ${target || "(none)"} is not a bot this bot may delegate to.`
        if (!message.trim()) return "Error: a delegation needs a message."
        const depth = (request.parent.depth ?? 0) + 1
        if (depth > maxDelegationDepth) return "Error: delegation is nested too deeply."
        const bot = yield* bots.get(target)
        // A stateless turn (history in memory) delegates statelessly: nothing of it is stored.
        const stateless = request.parent.history !== undefined
        const session = stateless
          ? { id: request.parent.sessionId, client_id: request.parent.clientId }
          : yield* sessions.getOrCreate({ botId: target, clientId: `delegation:${request.parent.sessionId}` })
        // A stateless turn has no conversation anywhere but its caller's: nothing is posted.
        const destination = stateless ? undefined : yield* outlets.destination(request.parent)
        yield* request.parent.emit({ type: "delegation_post", target_bot: target, bot_id: target })
        const result = yield* request.runTurn({
          runId: request.parent.runId,
          sessionId: session.id,
          clientId: session.client_id,
          bot,
          channel: null,
          userText: message,
          principal: request.parent.principal,
          emit: () => Effect.void,
          depth,
          // Its own delegations post to the same conversation.
          ...(destination ? { dispatch: destination } : {}),
          ...(stateless ? { history: [] } : {})
        })
        if (destination && result.text.trim()) {
          yield* outlets.post({
            destination,
            text: result.text,
            bot: { id: bot.id, name: bot.name },
            askedBy: request.parent.bot.id,
            sessionId: request.parent.sessionId
          })
        }
        return result.text
      }).pipe(
        Effect.catchAll((error) => Effect.succeed(`Error: delegation failed: ${error instanceof Error ? error.message : String(error)}`))
      )

    return traced("Delegation", { delegate } as const)
  }),
  dependencies: [Bots.Default, Sessions.Default, DelegationOutlets.Default]
}) {}
