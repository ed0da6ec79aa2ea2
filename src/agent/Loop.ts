/**
 * The agent loop: assemble the context, call the LLM, run the tools it asks for, repeat until it
 * answers in text (or the iteration guard stops it). Every step is reported as an event and every
 * message is stored as it happens, so an interrupted turn leaves a true record behind.
 */
import { Config, Data, Duration, Effect, Option, Ref, Stream } from "effect"
import { randomUUID } from "node:crypto"
import { AppConfig } from "../config/AppConfig.ts"
import { Hooks } from "../hooks/Hooks.ts"
import type { HookIds } from "../hooks/Model.ts"
import { Llm } from "../providers/Llm.ts"
import type { ChatMessage, ToolCall, ToolSchema } from "../providers/Model.ts"
import { Sessions } from "../sessions/Sessions.ts"
import { SkillLibrary, type Skill } from "../skills/Skills.ts"
import { assemble } from "./Context.ts"
import { Interactions } from "./Interactions.ts"
import { detectSecrets } from "./secrets.ts"
import { ToolRegistry, type ToolContext } from "./Tools.ts"
import { Carapaces } from "../carapaces/Carapaces.ts"
import { Workspaces } from "../workspaces/Workspaces.ts"
import { Delegation, delegateToolName, delegateToolSchema } from "./Delegation.ts"
import type { TurnInput, TurnResult } from "./Turn.ts"
import { traced } from "../telemetry/Spans.ts"

export class SkillNotFound extends Data.TaggedError("SkillNotFound")<{ readonly message: string }> {}

const agentConfig = Config.all({
  clientToolTimeoutSeconds: Config.integer("CLIENT_TOOL_TIMEOUT_SECONDS").pipe(Config.withDefault(120)),
  approvalTimeoutSeconds: Config.integer("APPROVAL_TIMEOUT_SECONDS").pipe(Config.withDefault(600)),
  answerReserveTokens: Config.integer("ANSWER_RESERVE_TOKENS").pipe(Config.withDefault(4096)),
  historyLimit: Config.integer("HISTORY_MESSAGES").pipe(Config.withDefault(200)),
  contextWindow: Config.option(Config.integer("CONTEXT_WINDOW"))
})

const parseArgs = (raw: string): Record<string, unknown> => {
  if (!raw.trim()) return {}
  try {
    const value = JSON.parse(raw)
    return value && typeof value === "object" && !Array.isArray(value) ? value : { value }
  } catch {
    return { _raw: raw }
  }
}

/** A tool may ask the client to act: `{"client_action": {...}}` or `{"client_actions": [...]}` in its result. */
const clientActionsOf = (result: string): ReadonlyArray<unknown> => {
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

const providerOf = (model: string | undefined) => (model && model.includes("/") ? model.split("/", 1)[0]! : null)

export class AgentLoop extends Effect.Service<AgentLoop>()("cairn/AgentLoop", {
  effect: Effect.gen(function* () {
    const llm = yield* Llm
    const sessions = yield* Sessions
    const tools = yield* ToolRegistry
    const skills = yield* SkillLibrary
    const hooks = yield* Hooks
    const interactions = yield* Interactions
    const delegation = yield* Delegation
    const carapaces = yield* Carapaces
    const workspaces = yield* Workspaces
    const config = yield* agentConfig
    const { defaultModel } = yield* AppConfig

    const resolveSkills = (ids: ReadonlyArray<string>) =>
      Effect.forEach([...new Set(ids)], (id) => {
        const skill = skills.get(id)
        return skill ? Effect.succeed(skill) : Effect.fail(new SkillNotFound({ message: `Unknown skill: ${id}` }))
      })

    const runTurn = (input: TurnInput): Effect.Effect<TurnResult, SkillNotFound | Error> =>
      Effect.gen(function* () {
        const { bot, emit } = input
        const correlationId = input.runId
        const ids: HookIds = {
          bot_id: bot.id,
          session_id: input.sessionId,
          channel_id: input.channel?.id ?? null,
          client_id: input.clientId,
          correlation_id: correlationId
        }
        const model =
          input.modelOverride ?? input.executionConfig?.model_override ?? input.channel?.model_override ?? bot.model ?? defaultModel

        if (input.userText !== null) {
          const patterns = detectSecrets(input.userText)
          if (patterns.length > 0) yield* emit({ type: "secret_warning", patterns })
          yield* sessions.append(input.sessionId, {
            role: "user",
            content: input.userText,
            attachments: input.attachments ?? [],
            metadata: { run_id: input.runId }
          })
        }
        yield* hooks.fire("before_context_assembly", { ...ids, extra: { user_message: input.userText ?? "" } })

        // Carapaces (of the bot, the channel, and the integrations bound to it) add tools and skills.
        const capabilities =
          bot.carapaces.length === 0 && !input.channel
            ? { carapaces: [], tools: [], skills: [] }
            : yield* carapaces.forTurn(bot.id, input.channel?.id ?? null)
        const turnSkills: ReadonlyArray<Skill> = yield* resolveSkills([
          ...bot.skills,
          ...capabilities.skills,
          ...(input.executionConfig?.skills ?? [])
        ])
        const workspaceListing = input.channel?.workspace_enabled
          ? yield* workspaces.contextListing(input.channel.id).pipe(Effect.orElseSucceed(() => ""))
          : ""
        const clientTools = new Map(bot.client_tools.map((tool) => [tool.name, tool]))
        const toolNames = [...new Set([...bot.tools, ...capabilities.tools, ...(input.executionConfig?.tools ?? [])])]
        const schemas: Array<ToolSchema> = []
        for (const name of toolNames) {
          const tool = tools.get(name)
          if (tool) schemas.push(tool.schema)
          else yield* Effect.logWarning(`Bot ${bot.id} names an unknown tool: ${name}`)
        }
        for (const tool of bot.client_tools) {
          schemas.push({ type: "function", function: { name: tool.name, description: tool.description, parameters: tool.parameters } })
        }
        if (bot.delegate_bots.length > 0) schemas.push(delegateToolSchema(bot.delegate_bots))

        const toolContext: ToolContext = {
          botId: bot.id,
          sessionId: input.sessionId,
          channelId: input.channel?.id ?? null,
          clientId: input.clientId,
          correlationId
        }
        const toolsUsed: Array<string> = []
        const clientActions: Array<unknown> = []
        const partial = yield* Ref.make("")

        const storePartialOnInterrupt = Effect.gen(function* () {
          const text = yield* Ref.get(partial)
          yield* sessions
            .append(input.sessionId, { role: "assistant", content: text, metadata: { run_id: input.runId, cancelled: true } })
            .pipe(Effect.ignore)
        })

        const runTool = (call: ToolCall, iteration: number) =>
          Effect.gen(function* () {
            const args = parseArgs(call.arguments)
            const policy = bot.tool_policies[call.name] ?? "allow"
            if (policy === "deny") return `Error: the tool ${call.name} is not allowed for this bot.`
            if (policy === "require_approval") {
              const approvalId = yield* interactions.createApproval({
                runId: input.runId,
                sessionId: input.sessionId,
                toolName: call.name,
                args
              })
              yield* emit({
                type: "approval_request",
                request_id: approvalId,
                approval_id: approvalId,
                tool_name: call.name,
                tool: call.name,
                arguments: args
              })
              const approved = yield* interactions.awaitDecision(approvalId, Duration.seconds(config.approvalTimeoutSeconds))
              yield* emit({ type: "approval_resolved", request_id: approvalId, approval_id: approvalId, approved })
              if (!approved) return `The user did not approve the tool call ${call.name}; it was not run.`
            }
            const toolType = clientTools.has(call.name) ? "client" : call.name === delegateToolName ? "delegation" : tools.get(call.name)?.source ?? "unknown"
            yield* hooks.fire("before_tool_execution", { ...ids, extra: { tool_name: call.name, tool_type: toolType, args, iteration } })
            if (clientTools.has(call.name)) {
              const requestId = randomUUID()
              yield* emit({ type: "tool_request", request_id: requestId, tool: call.name, name: call.name, arguments: args })
              const answer = yield* interactions.awaitToolResult(requestId, Duration.seconds(config.clientToolTimeoutSeconds))
              return Option.getOrElse(
                answer,
                () => `Error: the client did not return a result for ${call.name} within ${config.clientToolTimeoutSeconds} s.`
              )
            }
            if (call.name === delegateToolName) {
              return yield* delegation.delegate({ parent: input, args, allowed: bot.delegate_bots, runTurn })
            }
            return yield* tools.execute(call.name, args, toolContext).pipe(
              Effect.catchAll((error) => Effect.succeed(`Error: ${error.message}`))
            )
          })

        const loop = Effect.gen(function* () {
          for (let iteration = 1; ; iteration++) {
            const history = yield* sessions.recent(input.sessionId, config.historyLimit)
            const context = assemble({
              bot,
              model,
              history,
              skills: turnSkills,
              preamble: [input.executionConfig?.system_preamble, workspaceListing].filter(Boolean).join("\n\n") || undefined,
              channel: input.channel ?? undefined,
              reserve: config.answerReserveTokens,
              limit: Option.getOrUndefined(config.contextWindow)
            })
            yield* emit({ type: "context_budget", used: context.used, limit: context.limit })
            const finalPass = iteration > bot.max_iterations
            const offered = finalPass ? [] : schemas
            yield* hooks.fire("before_llm_call", {
              ...ids,
              extra: {
                model,
                message_count: context.messages.length,
                tools_count: offered.length,
                provider_id: providerOf(model),
                iteration
              }
            })
            const messages: ReadonlyArray<ChatMessage> = finalPass
              ? [...context.messages, { role: "system", content: "Tool use is over for this turn. Answer now with what you have." }]
              : context.messages
            const started = Date.now()
            let text = ""
            let reasoning = ""
            let fallbackModel: string | null = null
            yield* Ref.set(partial, "")
            const finished = yield* llm
              .stream({
                model,
                messages,
                tools: offered.length > 0 ? offered : undefined,
                temperature: bot.temperature ?? undefined,
                fallbackModels: bot.fallback_models,
                usage: {
                  source: "agent",
                  botId: bot.id,
                  sessionId: input.sessionId,
                  principalKind: input.principal?.kind,
                  principalId: input.principal?.id
                }
              })
              .pipe(
                Stream.runFoldEffect(null as null | Extract<import("../providers/Model.ts").LlmStreamEvent, { _tag: "Finished" }>, (last, event) => {
                  switch (event._tag) {
                    case "TextDelta":
                      text += event.text
                      return Effect.zipRight(
                        Ref.set(partial, text),
                        Effect.as(emit({ type: "assistant_text", text, delta: event.text }), last)
                      )
                    case "ReasoningDelta":
                      reasoning += event.text
                      return Effect.as(emit({ type: "thinking_content", text: reasoning, delta: event.text }), last)
                    case "RateLimitWait":
                      return Effect.as(emit({ type: "rate_limit_wait", wait_seconds: event.waitSeconds }), last)
                    case "Fallback":
                      fallbackModel = event.fallbackModel
                      text = ""
                      return Effect.as(
                        emit({ type: "fallback", original_model: event.originalModel, fallback_model: event.fallbackModel }),
                        last
                      )
                    case "ToolCallDelta":
                      return Effect.succeed(last)
                    case "Finished":
                      return Effect.succeed(event)
                  }
                })
              )
            if (!finished) return yield* Effect.fail(new Error("The model's stream ended without finishing"))
            yield* hooks.fire("after_llm_call", {
              ...ids,
              extra: {
                model: finished.model,
                duration_ms: Date.now() - started,
                prompt_tokens: finished.usage?.prompt_tokens ?? null,
                completion_tokens: finished.usage?.completion_tokens ?? null,
                total_tokens: finished.usage?.total_tokens ?? null,
                tool_calls_count: finished.toolCalls.length,
                fallback_used: fallbackModel !== null,
                fallback_model: fallbackModel,
                iteration,
                provider_id: providerOf(finished.model)
              }
            })
            if (finished.toolCalls.length === 0 || finalPass) {
              const answer = finished.text || text
              yield* sessions.append(input.sessionId, {
                role: "assistant",
                content: answer,
                metadata: { run_id: input.runId, model: finished.model, ...(reasoning ? { reasoning } : {}) }
              })
              return answer
            }
            yield* sessions.append(input.sessionId, {
              role: "assistant",
              content: finished.text || null,
              tool_calls: finished.toolCalls.map((call) => ({
                id: call.id,
                type: "function" as const,
                function: { name: call.name, arguments: call.arguments }
              })),
              metadata: { run_id: input.runId, model: finished.model }
            }, { durable: false })
            for (const call of finished.toolCalls) {
              const args = parseArgs(call.arguments)
              yield* emit({ type: "tool_start", tool: call.name, name: call.name, args, tool_call_id: call.id })
              const toolStarted = Date.now()
              const result = yield* runTool(call, iteration)
              const duration = Date.now() - toolStarted
              toolsUsed.push(call.name)
              clientActions.push(...clientActionsOf(result))
              yield* sessions.append(input.sessionId, {
                role: "tool",
                content: result,
                tool_call_id: call.id,
                metadata: { run_id: input.runId, tool_name: call.name, duration_ms: duration }
              }, { durable: false })
              yield* emit({
                type: "tool_result",
                tool: call.name,
                name: call.name,
                result,
                duration_ms: duration,
                tool_call_id: call.id,
                is_error: result.startsWith("Error:")
              })
              yield* hooks.fire("after_tool_call", { ...ids, extra: { tool_name: call.name, tool_args: args, duration_ms: duration } })
            }
          }
        })

        const text = yield* loop.pipe(Effect.onInterrupt(() => storePartialOnInterrupt))
        if ((input.depth ?? 0) === 0) {
          yield* hooks.fire("after_response", { ...ids, extra: { response_length: text.length, tool_calls_made: toolsUsed.length } })
        }
        return { text, toolsUsed, clientActions }
      })

    return traced("AgentLoop", { runTurn } as const)
  })
}) {}
