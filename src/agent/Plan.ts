/**
 * The turn plan: which model answers, with which skills, tools and preamble. Each source of
 * capability is a contributor (the bot itself, its carapaces, the task's execution config, the
 * channel's workspace); a new one (speech, screening) is one more entry in `contributors`, and the
 * loop does not change. Order matters and is kept: tools, skills and preamble appear in the order
 * the contributors give them.
 */
import { Effect } from "effect"
import type { ClientTool } from "../bots/Model.ts"
import { Carapaces } from "../carapaces/Carapaces.ts"
import { AppConfig } from "../config/AppConfig.ts"
import type { ToolSchema } from "../providers/Model.ts"
import { layer as SkillLibraryLive, type Skill, SkillLibrary } from "../skills/Skills.ts"
import { traced } from "../telemetry/Spans.ts"
import { Workspaces } from "../workspaces/Workspaces.ts"
import { delegateToolSchema } from "./Delegation.ts"
import { SkillNotFound } from "./Errors.ts"
import type { ContextSource } from "./Events.ts"
import type { ExternalOrigin } from "./Provenance.ts"
import { Retrieval } from "./Retrieval.ts"
import { expandToolNames, layer as ToolRegistryLive, toolPolicy, ToolRegistry } from "./Tools.ts"
import type { CurrentTurn, TurnInput } from "./Turn.ts"

/** What one contributor adds to a turn. */
export interface PlanContribution {
  readonly tools?: ReadonlyArray<string>
  readonly skills?: ReadonlyArray<string>
  readonly preamble?: string
}

export interface PlanContributor {
  /** The source its context-assembly event names (`context.<name>`). */
  readonly name: Exclude<ContextSource, "retrieval">
  readonly contribute: (input: TurnInput) => Effect.Effect<PlanContribution>
}

export interface TurnPlan {
  readonly model: string
  readonly skills: ReadonlyArray<Skill>
  /** Everything offered to the model: registry tools, the bot's client tools, delegation. */
  readonly toolSchemas: ReadonlyArray<ToolSchema>
  /** Tools the client runs, by name. */
  readonly clientTools: ReadonlyMap<string, ClientTool>
  /** Tools whose calls end the turn for the caller to answer in its next request (`TurnInput.callerTools`). */
  readonly callerAnswers: ReadonlySet<string>
  readonly preamble: string | undefined
  /** Of the preamble, the estimated tokens that retrieval added (passages and notes). */
  readonly retrievalTokens: number
  /** Outside content the plan itself puts in the context (retrieved passages); the history's is the history's. */
  readonly origins: ReadonlyArray<ExternalOrigin>
}

/** The model that answers a turn: the request's override, the task's, the channel's, the bot's, the default. */
export const turnModel = (input: TurnInput, defaultModel: string) =>
  input.modelOverride ?? input.executionConfig?.model_override ?? input.channel?.model_override ?? input.bot.model ?? defaultModel

const nothing: PlanContribution = {}

export class TurnPlanner extends Effect.Service<TurnPlanner>()("cairn/TurnPlanner", {
  effect: Effect.gen(function*() {
    const tools = yield* ToolRegistry
    const skills = yield* SkillLibrary
    const carapaces = yield* Carapaces
    const workspaces = yield* Workspaces
    const retrieval = yield* Retrieval
    const { defaultModel } = yield* AppConfig

    const contributors: ReadonlyArray<PlanContributor> = [
      { name: "bot", contribute: ({ bot }) => Effect.succeed({ tools: bot.tools, skills: bot.skills }) },
      {
        // Carapaces of the bot, the channel, and the integrations bound to the channel.
        name: "carapaces",
        contribute: ({ bot, channel }) =>
          bot.carapaces.length === 0 && !channel
            ? Effect.succeed(nothing)
            : Effect.map(carapaces.forTurn(bot.id, channel?.id ?? null), ({ tools, skills }) => ({ tools, skills }))
      },
      {
        name: "execution_config",
        contribute: ({ executionConfig }) =>
          Effect.succeed(
            executionConfig
              ? { tools: executionConfig.tools, skills: executionConfig.skills, preamble: executionConfig.system_preamble }
              : nothing
          )
      },
      {
        name: "workspace",
        contribute: ({ channel }) =>
          channel?.workspace_enabled
            ? Effect.map(workspaces.contextListing(channel.id), (listing) => ({ preamble: listing }))
            : Effect.succeed(nothing)
      }
    ]

    const resolveSkills = (ids: ReadonlyArray<string>) =>
      Effect.forEach([...new Set(ids)], (id) => {
        const skill = skills.get(id)
        return skill ? Effect.succeed(skill) : Effect.fail(new SkillNotFound({ message: `Unknown skill: ${id}` }))
      })

    const plan = (input: TurnInput): Effect.Effect<TurnPlan, SkillNotFound, CurrentTurn> =>
      Effect.gen(function*() {
        const { bot } = input
        const parts = yield* Effect.forEach(contributors, (contributor) => contributor.contribute(input))
        const turnSkills = yield* resolveSkills(parts.flatMap((part) => part.skills ?? []))
        const toolSchemas: Array<ToolSchema> = []
        for (const name of expandToolNames(parts.flatMap((part) => part.tools ?? []), tools.list())) {
          const tool = tools.get(name)
          if (tool) toolSchemas.push(tool.schema)
          else yield* Effect.logWarning(`Bot ${bot.id} names an unknown tool: ${name}`)
        }
        // A caller that answers tools itself (OpenAI's way) brings its own client tools: the bot's,
        // which wait for /chat/tool_result, are not offered to it. A name the bot denies is not offered at all.
        const callerTools = (input.callerTools ?? []).filter((tool) =>
          toolPolicy(bot.tool_policies, tool.function.name, undefined) !== "deny"
        )
        const callerNames = new Set(callerTools.map((tool) => tool.function.name))
        const botClientTools = input.callerTools ? [] : bot.client_tools
        for (const tool of botClientTools) {
          toolSchemas.push({ type: "function", function: { name: tool.name, description: tool.description, parameters: tool.parameters } })
        }
        if (bot.delegate_bots.length > 0) toolSchemas.push(delegateToolSchema(bot.delegate_bots))
        const offered = [...toolSchemas.filter((schema) => !callerNames.has(schema.function.name)), ...callerTools]
        const model = turnModel(input, defaultModel)
        // Retrieval runs once a turn, on the user's message, after the plan's own parts.
        const retrieved = yield* retrieval.retrieve(input, model)
        const preamble = [
          ...parts.flatMap((part) => (part.preamble ? [part.preamble] : [])),
          ...(retrieved.preamble ? [retrieved.preamble] : [])
        ].join("\n\n")
        if (bot.context_events) {
          yield* input.emit(
            ...parts.map((part, index) => ({
              type: `context.${contributors[index]!.name}` as `context.${PlanContributor["name"]}`,
              tools: part.tools ?? [],
              skills: part.skills ?? [],
              preamble: part.preamble ?? ""
            })),
            { type: "context.retrieval", tools: [], skills: [], preamble: retrieved.preamble ?? "" }
          )
        }
        return {
          model,
          retrievalTokens: retrieved.tokens,
          origins: retrieved.origins,
          skills: turnSkills,
          toolSchemas: offered,
          clientTools: new Map(botClientTools.map((tool) => [tool.name, tool])),
          callerAnswers: callerNames,
          preamble: preamble || undefined
        }
      })

    return traced("TurnPlanner", { plan } as const)
  }),
  dependencies: [Carapaces.Default, Retrieval.Default, SkillLibraryLive, ToolRegistryLive, Workspaces.Default]
}) {}
