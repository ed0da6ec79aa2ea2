/**
 * One tool call within a turn: the bot's policy (deny, or wait for the user's approval; outside
 * content in the context holds a consequential call, agent/Policy.ts), then the tool itself (run by the client, by another bot through delegation, or from the registry). The
 * call and its result are reported as events and the result is stored as a tool message.
 */
import { Config, Duration, Effect, Option } from "effect"
import { randomUUID } from "node:crypto"
import { Hooks } from "../hooks/Hooks.ts"
import { Journal } from "../logs/Journal.ts"
import type { ToolCall } from "../providers/Model.ts"
import { maskArguments } from "../secrets/Patterns.ts"
import { traced } from "../telemetry/Spans.ts"
import { ApprovalOutlets } from "./ApprovalOutlets.ts"
import { delegateToolName, Delegation } from "./Delegation.ts"
import type { ApprovalReason } from "./Events.ts"
import { Interactions } from "./Interactions.ts"
import type { TurnPlan } from "./Plan.ts"
import { decideCall } from "./Policy.ts"
import { describeOrigin, type ExternalOrigin, ownerOrigin, resultOrigin } from "./Provenance.ts"
import { declaredToolPolicy, layer as ToolRegistryLive, ToolRegistry } from "./Tools.ts"
import { CurrentTurn, type TurnInput, type TurnResult } from "./Turn.ts"

const waitConfig = Config.all({
  clientToolTimeoutSeconds: Config.integer("CLIENT_TOOL_TIMEOUT_SECONDS").pipe(Config.withDefault(120)),
  approvalTimeoutSeconds: Config.integer("APPROVAL_TIMEOUT_SECONDS").pipe(Config.withDefault(600))
})

/** Why a call the model made cannot run (a `ToolStep.run` result saying so), or its arguments when it can. */
export type CheckedCall =
  | { readonly _tag: "Runnable"; readonly args: Record<string, unknown> }
  | { readonly _tag: "Malformed"; readonly args: Record<string, unknown>; readonly result: string }

/** A parse error in a few words for the model: JSON.parse's message, cut. */
const briefly = (error: unknown) => (error instanceof Error ? error.message : String(error)).replace(/\s+/g, " ").slice(0, 160)

/**
 * The model's arguments as an object: empty text or `null` is none; a JSON string holding an object
 * (arguments encoded twice) is taken as that object. Anything else is a problem for the model to
 * fix, said in its words: a tool is never run on arguments guessed from broken text.
 */
export const parseArgs = (raw: string): { readonly args: Record<string, unknown> } | { readonly problem: string } => {
  if (!raw.trim()) return { args: {} }
  let value: unknown
  try {
    value = JSON.parse(raw)
    if (typeof value === "string" && value.trim().startsWith("{")) value = JSON.parse(value)
  } catch (error) {
    return { problem: `not valid JSON (${briefly(error)})` }
  }
  if (value === null) return { args: {} }
  if (typeof value === "object" && !Array.isArray(value)) return { args: value as Record<string, unknown> }
  return { problem: `not a JSON object (${Array.isArray(value) ? "a list" : `a ${typeof value}`})` }
}

/**
 * Whether the model's call can run: a tool this turn offers, with arguments that are a JSON object.
 * A name nothing offers is answered with the names that are; a tool that exists but was not offered
 * keeps its own answer.
 */
export const checkCall = (call: ToolCall, plan: TurnPlan, known: (name: string) => boolean): CheckedCall => {
  const parsed = parseArgs(call.arguments)
  const args = "args" in parsed ? parsed.args : { _raw: call.arguments }
  const offered = plan.toolSchemas.map((schema) => schema.function.name)
  if (!offered.includes(call.name)) {
    const result = known(call.name)
      ? `Error: the tool ${call.name} is not available in this conversation.`
      : `Error: there is no tool named ${call.name}. The tools you can call: ${offered.join(", ") || "none"}.`
    return { _tag: "Malformed", args, result }
  }
  if ("problem" in parsed) {
    const result = `Error: the arguments of ${call.name} were ${parsed.problem}; the tool was not run. ` +
      "Call it again with its arguments as one JSON object."
    return { _tag: "Malformed", args, result }
  }
  return { _tag: "Runnable", args }
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
    const approvalOutlets = yield* ApprovalOutlets

    /** Asks a person when the policy says so (the chat's user, or the approval inbox); answers whether the call may run. */
    const approve = (
      call: ToolCall,
      args: Record<string, unknown>,
      why: { reason: ApprovalReason; origins: ReadonlyArray<ExternalOrigin> }
    ) =>
      Effect.gen(function*() {
        const { input } = yield* CurrentTurn
        const approvalId = yield* interactions.createApproval({
          runId: input.runId,
          sessionId: input.sessionId,
          toolName: call.name,
          args,
          reason: why.reason,
          origins: why.origins,
          botId: input.bot.id
        })
        yield* input.emit({
          type: "approval_request",
          request_id: approvalId,
          approval_id: approvalId,
          tool_name: call.name,
          tool: call.name,
          arguments: args,
          reason: why.reason,
          ...(why.origins.length > 0 ? { origins: why.origins } : {})
        })
        const timeoutSeconds = input.bot.approval_timeout_seconds ?? config.approvalTimeoutSeconds
        // Told where the run came from (a bridge chat, a Slack thread) once, whichever run asks.
        if (yield* interactions.claimNotice(approvalId)) {
          yield* Effect.fork(
            approvalOutlets.announce(input, { approvalId, tool: call.name, args, reason: why.reason, origins: why.origins, timeoutSeconds })
          )
        }
        const approved = yield* interactions.awaitDecision(approvalId, Duration.seconds(timeoutSeconds))
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

    /** What was said instead of running the call: Cairn's own words, not outside content. */
    const notRun = (result: string) => ({ result, origin: ownerOrigin })

    const execute = (
      call: ToolCall,
      args: Record<string, unknown>,
      iteration: number,
      plan: TurnPlan,
      runTurn: RunTurn,
      origins: ReadonlyArray<ExternalOrigin>
    ) =>
      Effect.gen(function*() {
        const turn = yield* CurrentTurn
        const { bot, emit } = turn.input
        const isClientTool = plan.clientTools.has(call.name)
        const registered = isClientTool || call.name === delegateToolName ? undefined : tools.get(call.name)
        const decision = decideCall({
          tool: call.name,
          declared: declaredToolPolicy(bot.tool_policies, call.name, registered?.source),
          untrustedPolicy: bot.untrusted_policy,
          // A client tool (shell_exec) and delegation can carry anything anywhere.
          effect: registered?.effect ?? "egress",
          origins
        })
        if (decision._tag === "Refuse") return notRun(decision.message)
        if (decision._tag === "Ask") {
          // An approval belongs to a stored run; a stateless call has none to wait in.
          if (!turn.record.stored) {
            return notRun(
              decision.reason === "untrusted_content"
                ? `Error: the tool ${call.name} was not run: this conversation holds content from outside (${
                  decision.origins.map(describeOrigin).join(", ")
                }), and a call without a session cannot ask the user to approve it.`
                : `Error: the tool ${call.name} needs the user's approval, which a call without a session cannot ask for.`
            )
          }
          if (!(yield* approve(call, args, decision))) return notRun(`The user did not approve the tool call ${call.name}; it was not run.`)
        }
        const toolType = isClientTool
          ? "client"
          : call.name === delegateToolName
          ? "delegation"
          : registered?.source ?? "unknown"
        yield* hooks.fire("before_tool_execution", {
          ...turn.hookIds,
          extra: { tool_name: call.name, tool_type: toolType, args, iteration }
        })
        const ran = (result: string) => ({ result, origin: resultOrigin({ name: call.name, source: registered?.source, args, result }) })
        if (isClientTool) {
          const requestId = randomUUID()
          // Open before the client hears of it: its answer may reach another process at once.
          yield* interactions.openToolRequest(requestId, turn.input.sessionId)
          yield* emit({ type: "tool_request", request_id: requestId, tool: call.name, name: call.name, arguments: args })
          const answer = yield* interactions.awaitToolResult(requestId, Duration.seconds(config.clientToolTimeoutSeconds))
          return ran(Option.getOrElse(
            answer,
            () => `Error: the client did not return a result for ${call.name} within ${config.clientToolTimeoutSeconds} s.`
          ))
        }
        if (call.name === delegateToolName) {
          return ran(yield* delegation.delegate({ parent: turn.input, args, allowed: bot.delegate_bots, runTurn }))
        }
        return ran(
          yield* tools
            .execute(call.name, args, turn.toolContext)
            .pipe(Effect.catchAll((error) => Effect.succeed(`Error: ${error.message}`)))
        )
      })

    /**
     * Runs one call the model asked for, reports it, stores its result, and answers the result text
     * and whether the call was malformed (not run: the loop bounds how often a model may do that).
     */
    const run = (call: ToolCall, iteration: number, plan: TurnPlan, runTurn: RunTurn, origins: ReadonlyArray<ExternalOrigin> = []) =>
      Effect.gen(function*() {
        const turn = yield* CurrentTurn
        const { emit, runId, sessionId } = turn.input
        // Only what this turn offered runs: a model naming any other registered tool gets nothing.
        const checked = checkCall(call, plan, (name) => tools.get(name) !== undefined || name === delegateToolName)
        const { args } = checked
        yield* emit({ type: "tool_start", tool: call.name, name: call.name, args, tool_call_id: call.id })
        const started = Date.now()
        const { origin, result } = yield* journal.span(
          {
            correlationId: runId,
            kind: "tool",
            name: call.name,
            botId: turn.input.bot.id,
            sessionId,
            attributes: { tool_call_id: call.id, iteration, arguments: maskArguments(args) }
          },
          checked._tag === "Malformed" ? Effect.succeed(notRun(checked.result)) : execute(call, args, iteration, plan, runTurn, origins),
          (done) => ({
            attributes: { result_chars: done.result.length, origin: describeOrigin(done.origin) },
            error: toolFailure(done.result)
          })
        )
        const duration = Date.now() - started
        const failure = toolFailure(result)
        yield* turn.record.append(
          {
            role: "tool",
            content: result,
            tool_call_id: call.id,
            metadata: { run_id: runId, tool_name: call.name, duration_ms: duration, origin }
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
        if (checked._tag === "Runnable") {
          yield* hooks.fire("after_tool_call", { ...turn.hookIds, extra: { tool_name: call.name, tool_args: args, duration_ms: duration } })
        }
        return { result, malformed: checked._tag === "Malformed" }
      })

    return traced("ToolStep", { run } as const)
  }),
  dependencies: [ApprovalOutlets.Default, Delegation.Default, Hooks.Default, Interactions.Default, Journal.Default, ToolRegistryLive]
}) {}
