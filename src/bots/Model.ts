/** A bot: an LLM-driven agent with its prompt, model, tools, skills and policies. */
import { ParseResult, Schema } from "effect"
import { bodyOptions } from "../contract/Params.ts"

export const BotId = Schema.String.pipe(
  Schema.pattern(/^[a-z0-9][a-z0-9_-]{0,63}$/, {
    message: () => "Bot ids are 1-64 characters: lowercase letters, digits, '-' and '_'"
  })
)

/** What a tool call needs before it runs: nothing, a human's approval, or it never runs. */
export const ToolPolicy = Schema.Literal("allow", "require_approval", "deny")

/**
 * What happens to a `write` or `egress` tool call once outside content (a mail, a fetched page, a
 * stranger's message; agent/Provenance.ts) is in the turn's context: held for a person's approval
 * (the default), refused, or run as any other. `read` tools always run; `tool_policies` win.
 */
export const UntrustedPolicy = Schema.Literal("approve", "deny", "allow")
export type UntrustedPolicy = typeof UntrustedPolicy.Type

/** Seconds an approval waits for a person: 0 (deny at once) to a week. */
export const ApprovalTimeout = Schema.Int.pipe(
  Schema.between(0, 604_800, { message: () => "approval_timeout_seconds is 0 (deny at once) to 604800 (a week)" })
)

/** A tool executed by the client (CLI, app): the schema the model sees. */
export class ClientTool extends Schema.Class<ClientTool>("ClientTool")({
  name: Schema.String,
  description: Schema.optionalWith(Schema.String, { default: () => "" }),
  parameters: Schema.optionalWith(Schema.Record({ key: Schema.String, value: Schema.Unknown }), {
    default: () => ({ type: "object", properties: {} })
  })
}) {}

/** Client tools the companion clients implement, which a bot names without writing their schema. */
export const builtInClientTools: ReadonlyMap<string, ClientTool> = new Map([
  [
    "shell_exec",
    new ClientTool({
      name: "shell_exec",
      description: "Run a shell command on the user's machine (the client asks the user first) and return its output",
      parameters: {
        type: "object",
        properties: {
          command: { type: "string", description: "The command line to run" },
          timeout: { type: "integer", description: "Seconds before the command is stopped (default 30)", minimum: 1 }
        },
        required: ["command"]
      }
    })
  ]
])

/** A client tool as a bot lists it: a built-in one by name, or a whole schema. */
const ClientToolEntry = Schema.Union(
  ClientTool,
  Schema.transformOrFail(Schema.String, Schema.typeSchema(ClientTool), {
    strict: true,
    decode: (name, _, ast) => {
      const tool = builtInClientTools.get(name)
      return tool
        ? ParseResult.succeed(tool)
        : ParseResult.fail(
          new ParseResult.Type(ast, name, `Unknown built-in client tool: ${name} (known: ${[...builtInClientTools.keys()].join(", ")})`)
        )
    },
    encode: (tool) => ParseResult.succeed(tool.name)
  })
)

/**
 * Retrieval in the turn: before the model is called, the user's message is searched over the
 * documents (and, up to `notes_top_k`, the bot's own notes); the passages kept go into the context.
 */
export const RetrievalSettings = Schema.Struct({
  enabled: Schema.optionalWith(Schema.Boolean, { default: () => false }),
  /** Passages kept at most. */
  top_k: Schema.optionalWith(Schema.Int.pipe(Schema.between(1, 20)), { default: () => 4 }),
  /** The least cosine similarity to the message a passage needs (0: full-text-only hits pass too). */
  min_score: Schema.optionalWith(Schema.Number.pipe(Schema.between(0, 1)), { default: () => 0 }),
  /** Only documents of these integrations; default every document (never another bot's notes). */
  integration_ids: Schema.optionalWith(Schema.Array(Schema.String.pipe(Schema.minLength(1))), { default: () => [] }),
  /** The bot's own notes injected at most (the cap on what memory adds by itself). */
  notes_top_k: Schema.optionalWith(Schema.Int.pipe(Schema.between(0, 20)), { default: () => 2 }),
  /** `llm`: the model reorders and filters the hybrid ranking's first `rerank_candidates`. */
  rerank: Schema.optionalWith(Schema.Literal("none", "llm"), { default: () => "none" as const }),
  rerank_candidates: Schema.optionalWith(Schema.Int.pipe(Schema.between(2, 50)), { default: () => 12 })
})
export type RetrievalSettings = typeof RetrievalSettings.Type

/** A channel's override: the fields it sets replace the bot's. */
export const RetrievalOverride = Schema.partial(RetrievalSettings.pipe(Schema.typeSchema))
export type RetrievalOverride = typeof RetrievalOverride.Type

export const AudioInput = Schema.Literal("transcribe", "native", "disabled")

const ThinkingBudget = Schema.Int.pipe(
  Schema.filter((n) => n === 0 || (n >= 1024 && n <= 128_000) || "Expected 0 (off) or 1024 to 128000 tokens")
)

const botFields = {
  name: Schema.String.pipe(Schema.minLength(1)),
  description: Schema.optionalWith(Schema.String, { default: () => "" }),
  model: Schema.optionalWith(Schema.NullOr(Schema.String), { default: () => null }),
  system_prompt: Schema.optionalWith(Schema.String, { default: () => "" }),
  tools: Schema.optionalWith(Schema.Array(Schema.String), { default: () => [] }),
  client_tools: Schema.optionalWith(Schema.Array(ClientToolEntry), { default: () => [] }),
  skills: Schema.optionalWith(Schema.Array(Schema.String), { default: () => [] }),
  carapaces: Schema.optionalWith(Schema.Array(Schema.String), { default: () => [] }),
  fallback_models: Schema.optionalWith(Schema.Array(Schema.String), { default: () => [] }),
  delegate_bots: Schema.optionalWith(Schema.Array(Schema.String), { default: () => [] }),
  tool_policies: Schema.optionalWith(Schema.Record({ key: Schema.String, value: ToolPolicy }), { default: () => ({}) }),
  untrusted_policy: Schema.optionalWith(UntrustedPolicy, { default: () => "approve" as const }),
  /**
   * How long a call held for approval waits for a person before it is denied (the approval
   * expires); null: the server's APPROVAL_TIMEOUT_SECONDS. 0 denies at once, without waiting: a
   * bot whose runs nobody watches (tasks, heartbeats, a bridge) then never sits on a question.
   */
  approval_timeout_seconds: Schema.optionalWith(Schema.NullOr(ApprovalTimeout), { default: () => null }),
  /** The scoped key whose scopes widget tokens for this bot copy. */
  api_key_id: Schema.optionalWith(Schema.NullOr(Schema.String), { default: () => null }),
  /**
   * How voice input reaches the bot: transcribed to text first; `native`, the model hears the audio
   * itself (an input_audio part; a transcript is still made when it can be); or not accepted.
   */
  audio_input: Schema.optionalWith(AudioInput, { default: () => "transcribe" as const }),
  retrieval: Schema.optionalWith(RetrievalSettings, { default: () => Schema.decodeSync(RetrievalSettings)({}) }),
  max_iterations: Schema.optionalWith(Schema.Int.pipe(Schema.between(1, 50)), { default: () => 10 }),
  temperature: Schema.optionalWith(Schema.NullOr(Schema.Number.pipe(Schema.between(0, 2))), { default: () => null }),
  /**
   * Extended thinking's budget in tokens for models that take one (Anthropic's, at least 1024;
   * Gemini's); 0, the default, leaves it off. OpenAI-compatible models think as they do anyway.
   */
  thinking_budget_tokens: Schema.optionalWith(ThinkingBudget, { default: () => 0 }),
  /** Whether its runs also send the context-assembly events (`context.<source>`), for debugging; off by default. */
  context_events: Schema.optionalWith(Schema.Boolean, { default: () => false })
}

/** A bot as stored and served. */
export class Bot extends Schema.Class<Bot>("Bot")({
  id: BotId,
  ...botFields,
  source: Schema.Literal("file", "api"),
  created_at: Schema.Date,
  updated_at: Schema.Date
}) {}

/** The configuration part (what a YAML file or a create request holds). */
export const BotConfig = Schema.Struct({ id: BotId, ...botFields })
export type BotConfig = typeof BotConfig.Type

export class CreateBot extends Schema.Class<CreateBot>("CreateBot")({ id: BotId, ...botFields }, bodyOptions) {}

/** An update names only what changes. */
export class UpdateBot extends Schema.Class<UpdateBot>("UpdateBot")(
  {
    name: Schema.optional(Schema.String.pipe(Schema.minLength(1))),
    description: Schema.optional(Schema.String),
    model: Schema.optional(Schema.NullOr(Schema.String)),
    system_prompt: Schema.optional(Schema.String),
    tools: Schema.optional(Schema.Array(Schema.String)),
    client_tools: Schema.optional(Schema.Array(ClientToolEntry)),
    skills: Schema.optional(Schema.Array(Schema.String)),
    carapaces: Schema.optional(Schema.Array(Schema.String)),
    fallback_models: Schema.optional(Schema.Array(Schema.String)),
    delegate_bots: Schema.optional(Schema.Array(Schema.String)),
    tool_policies: Schema.optional(Schema.Record({ key: Schema.String, value: ToolPolicy })),
    untrusted_policy: Schema.optional(UntrustedPolicy),
    approval_timeout_seconds: Schema.optional(Schema.NullOr(ApprovalTimeout)),
    api_key_id: Schema.optional(Schema.NullOr(Schema.String)),
    audio_input: Schema.optional(AudioInput),
    retrieval: Schema.optional(RetrievalSettings),
    max_iterations: Schema.optional(Schema.Int.pipe(Schema.between(1, 50))),
    temperature: Schema.optional(Schema.NullOr(Schema.Number.pipe(Schema.between(0, 2)))),
    thinking_budget_tokens: Schema.optional(ThinkingBudget),
    context_events: Schema.optional(Schema.Boolean)
  },
  bodyOptions
) {}

export class BotList extends Schema.Class<BotList>("BotList")({ bots: Schema.Array(Bot) }) {}

export const DEFAULT_BOT_ID = "default"
