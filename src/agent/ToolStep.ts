/**
 * One tool call within a turn: the bot's policy (deny, or wait for the user's approval), then the
 * tool itself (run by the client, by another bot through delegation, or from the registry). The
 * call and its result are reported as events and the result is stored as a tool message.
 */
import { Config, Duration, Effect, Option } from "effect"
import { randomUUID } from "node:crypto"
import { Hooks } from "../hooks/Hooks.ts"
import { Journal } from "../logs/Journal.ts"
import type { ToolCall } from "../providers/Model.ts"
import { maskArguments } from "../secrets/Patterns.ts"
import { traced } from "../telemetry/Spans.ts"
import { delegateToolName, Delegation } from "./Delegation.ts"
import { Interactions } from "./Interactions.ts"
import type { TurnPlan } from "./Plan.ts"
import { layer as ToolRegistryLive, toolPolicy, ToolRegistry } from "./Tools.ts"
import { CurrentTurn, type TurnInput, type TurnResult } from "./Turn.ts"

const waitConfig = Config.all({
  clientToolTimeoutSeconds: Config.integer("CLIENT_TOOL_TIMEOUT_SECONDS").pipe(Config.withDefault(120)),
  approvalTimeoutSeconds: Config.integer("APPROVAL_TIMEOUT_SECONDS").pipe(Config.withDefault(600))
})

/** The model's arguments as an object; text that is not a JSON object is kept, not dropped. */
export const parseArgs = (raw: string): Record<string, unknown> => {
  if (!raw.trim()) return {}
  try {
    const value = JSON.parse(raw)
    return value && typeof value === "object" && !Array.isArray(value) ? value : { value }
  } catch {
    return { _raw: raw }
  }
}

/** A tool may ask the client to act: `{"client_action": {...}}` or `{"client_actions": [...]}` in its result. */
export const clientActionsOf = (result: string): ReadonlyArray<unknown> => {
  try {
    const value = JSON.parse(result)
    if (value && typeof value === "object") {
      if (Array.isArray(value.client_actions)) return value.client_actions
      if (value.client_action && typeof value.client_action === "object") return [value.client_action]
    }
  } catch {
    // not JSON: no actions
  }
  return []
}

/** A tool result's failure message, when the result is a failure (`Error: …`); else null. */
const toolFailure = (result: string): string | null => (result.startsWith("Error:") ? result.slice("Error:".length).trim() : null)

/** How a nested turn is started; the loop passes itself, so delegation needs no import of it. */
export type RunTurn = (input: TurnInput) => Effect.Effect<TurnResult, unknown>

export class ToolStep extends Effect.Service<ToolStep>()("cairn/ToolStep", {
  effect: Effect.gen(function*() {
    const tools = yield* ToolRegistry
    const hooks = yield* Hooks
    const interactions = yield* Interactions
    const delegation = yield* Delegation
    const config = yield* waitConfig
    const journal = yield* Journal

    /** Asks the user when the policy says so; answers whether the call may run. */
    const approve = (call: ToolCall, args: Record<string, unknown>) =>
      Effect.gen(function*() {
        const { input } = yield* CurrentTurn
        const approvalId = yield* interactions.createApproval({
          runId: input.runId,
          sessionId: input.sessionId,
          toolName: call.name,
          args
        })
        yield* input.emit({
          type: "approval_request",
          request_id: approvalId,
          approval_id: approvalId,
          tool_name: call.name,
          tool: call.name,
          arguments: args
        })
        const approved = yield* interactions.awaitDecision(approvalId, Duration.seconds(config.approvalTimeoutSeconds))
        yield* input.emit({
          type: "approval_resolved",
          request_id: approvalId,
          approval_id: approvalId,
          approved,
          tool: call.name,
          verdict: approved ? "approved" : "denied"
        })
        return approved
      })

    const execute = (call: ToolCall, args: Record<string, unknown>, iteration: number, plan: TurnPlan, runTurn: RunTurn) =>
      Effect.gen(function*() {
        const turn = yield* CurrentTurn
        const { bot, emit } = turn.input
        // Only what this turn offered runs: a model naming any other registered tool gets nothing.
        if (!plan.toolSchemas.some((schema) => schema.function.name === call.name)) {
          return `Error: the tool ${call.name} is not available in this conversation.`
        }
        const policy = toolPolicy(bot.tool_policies, call.name, tools.get(call.name)?.source)
        if (policy === "deny") return `Error: the tool ${call.name} is not allowed for this bot.`
        // An approval belongs to a stored run; a stateless call has none to wait in.
        if (policy === "require_approval" && !turn.record.stored) {
          return `Error: the tool ${call.name} needs the user's approval, which a call without a session cannot ask for.`
        }
        if (policy === "require_approval" && !(yield* approve(call, args))) {
          return `The user did not approve the tool call ${call.name}; it was not run.`
        }
        const isClientTool = plan.clientTools.has(call.name)
        const toolType = isClientTool
          ? "client"
          : call.name === delegateToolName
          ? "delegation"
          : tools.get(call.name)?.source ?? "unknown"
        yield* hooks.fire("before_tool_execution", {
          ...turn.hookIds,
          extra: { tool_name: call.name, tool_type: toolType, args, iteration }
        })
        if (isClientTool) {
          const requestId = randomUUID()
          // Open before the client hears of it: its answer may reach another process at once.
          yield* interactions.openToolRequest(requestId)
          yield* emit({ type: "tool_request", request_id: requestId, tool: call.name, name: call.name, arguments: args })
          const answer = yield* interactions.awaitToolResult(requestId, Duration.seconds(config.clientToolTimeoutSeconds))
          return Option.getOrElse(
            answer,
            () => `Error: the client did not return a result for ${call.name} within ${config.clientToolTimeoutSeconds} s.`
          )
        }
        if (call.name === delegateToolName) {
          return yield* delegation.delegate({ parent: turn.input, args, allowed: bot.delegate_bots, runTurn })
        }
        return yield* tools
          .execute(call.name, args, turn.toolContext)
          .pipe(Effect.catchAll((error) => Effect.succeed(`Error: ${error.message}`)))
      })

    /** Runs one call the model asked for, reports it, stores its result, and answers the result text. */
    const run = (call: ToolCall, iteration: number, plan: TurnPlan, runTurn: RunTurn) =>
      Effect.gen(function*() {
        const turn = yield* CurrentTurn
        const { emit, runId, sessionId } = turn.input
        const args = parseArgs(call.arguments)
        yield* emit({ type: "tool_start", tool: call.name, name: call.name, args, tool_call_id: call.id })
        const started = Date.now()
        const result = yield* journal.span(
          {
            correlationId: runId,
            kind: "tool",
            name: call.name,
            botId: turn.input.bot.id,
            sessionId,
            attributes: { tool_call_id: call.id, iteration, arguments: maskArguments(args) }
          },
          execute(call, args, iteration, plan, runTurn),
          (text) => ({ attributes: { result_chars: text.length }, error: toolFailure(text) })
        )
        const duration = Date.now() - started
        const failure = toolFailure(result)
        yield* turn.record.append(
          {
            role: "tool",
            content: result,
            tool_call_id: call.id,
            metadata: { run_id: runId, tool_name: call.name, duration_ms: duration }
          },
          { durable: false }
        )
        yield* emit({
          type: "tool_result",
          tool: call.name,
          name: call.name,
          result,
          duration_ms: duration,
          tool_call_id: call.id,
          is_error: failure !== null,
          ...(failure !== null ? { error: failure } : {})
        })
        yield* hooks.fire("after_tool_call", { ...turn.hookIds, extra: { tool_name: call.name, tool_args: args, duration_ms: duration } })
        return result
      })

    return traced("ToolStep", { run } as const)
  }),
  dependencies: [Delegation.Default, Hooks.Default, Interactions.Default, Journal.Default, ToolRegistryLive]
}) {}
