/**
 * Memory compaction: when a session's history passes COMPACTION_THRESHOLD of the model's window
 * (less the answer's reserve), its oldest turns are summarised by the model into the session's next
 * summary version, which context assembly sends in their place; the newest turns, down to
 * COMPACTION_KEEP of the window, stay as they are. The cut is always just before a user message, so
 * a tool call and its result are never split. Passive messages join the summary only when the
 * channel's passive_memory is on; otherwise they are recent context only, and fall away with the
 * turns around them.
 */
import { Config, Effect, Option, Schema } from "effect"
import type { Bot } from "../bots/Model.ts"
import { completeJson } from "../providers/JsonCompletion.ts"
import { Llm } from "../providers/Llm.ts"
import type { UsageContext } from "../providers/Model.ts"
import type { HistoryRow } from "../sessions/Repo.ts"
import { Sessions } from "../sessions/Sessions.ts"
import { traced } from "../telemetry/Spans.ts"
import { messageTokens } from "./Context.ts"

export const compactionConfig = Config.all({
  threshold: Config.number("COMPACTION_THRESHOLD").pipe(
    Config.withDefault(0.75),
    Config.validate({ message: "Expected a fraction between 0 and 1", validation: (n) => n > 0 && n <= 1 })
  ),
  keep: Config.number("COMPACTION_KEEP").pipe(
    Config.withDefault(0.4),
    Config.validate({ message: "Expected a fraction between 0 and 1", validation: (n) => n > 0 && n < 1 })
  )
})

/** Text with something in it once trimmed. */
const Filled = Schema.compose(Schema.Trim, Schema.NonEmptyString)
/** What the model is asked to answer. */
const SummaryAnswer = Schema.Struct({ title: Filled, summary: Filled })
const summaryShape = "{\"title\": \"<at most 8 words>\", \"summary\": \"<at most 250 words>\"}"
/**
 * The title of a summary whose model never answered the JSON asked for (no JSON mode, prose
 * instead): its answer text is the summary, under this title.
 */
export const fallbackTitle = "Conversation"

/** The transcript the model reads is cut to its newest part past this many characters. */
const maxTranscriptChars = 60_000
/** A tool result in the transcript is shown up to this many characters. */
const toolResultChars = 500

const instructions =
  "Summarize the conversation below for the assistant that continues it. Keep facts, decisions, open questions, names and numbers; " +
  "leave out greetings. When an earlier summary is given, fold it in: the new summary replaces it. " +
  `Answer with JSON only: ${summaryShape}.`

export class SummaryUnwritten extends Schema.TaggedError<SummaryUnwritten>()("SummaryUnwritten", { detail: Schema.String }) {}

/**
 * Where to cut a history so its newest part fits `keepTokens`: the seq of the last message to
 * summarise, or null when nothing can be (the kept part must begin with a user message, and at
 * least one message must be left to summarise).
 */
export const compactionCut = (
  rows: ReadonlyArray<Pick<HistoryRow, "seq" | "role" | "content" | "tool_calls">>,
  keepTokens: number
): number | null => {
  let kept = 0
  let cut: number | null = null
  for (let index = rows.length - 1; index > 0; index--) {
    kept += messageTokens(rows[index]!)
    if (kept > keepTokens) break
    if (rows[index]!.role === "user") cut = index
  }
  // The newest user message alone overflowing: keep it all the same (the model must see it).
  if (cut === null) {
    for (let index = rows.length - 1; index > 0; index--) {
      if (rows[index]!.role === "user") {
        cut = index
        break
      }
    }
  }
  return cut === null ? null : (rows[cut - 1]!.seq ?? null)
}

/** The lines a summary is written from; passive messages only when they join memory. */
export const transcriptLines = (
  rows: ReadonlyArray<
    { readonly role: string; readonly content: string | null; readonly passive: boolean; readonly tool_name: string | null }
  >,
  passiveMemory: boolean
) =>
  rows.flatMap((row) => {
    const text = row.content?.trim()
    if (!text || (row.passive && !passiveMemory)) return []
    if (row.role === "user") return [`${row.passive ? "User (not addressed to you)" : "User"}: ${text}`]
    if (row.role === "assistant") return [`Assistant: ${text}`]
    if (row.role === "tool") {
      return [`Tool ${row.tool_name ?? ""} answered: ${text.slice(0, toolResultChars)}${text.length > toolResultChars ? "…" : ""}`]
    }
    return []
  })

export class Compaction extends Effect.Service<Compaction>()("cairn/Compaction", {
  effect: Effect.gen(function*() {
    const sessions = yield* Sessions
    const llm = yield* Llm
    const config = yield* compactionConfig

    /**
     * The model's title and summary of `lines`, folding in `previous`. A model that never answers
     * the JSON (asked twice, see providers/JsonCompletion.ts) has its text kept as the summary,
     * titled `fallbackTitle`; only an empty answer writes nothing.
     */
    const write = (bot: Bot, lines: ReadonlyArray<string>, previous: string | null, usage: UsageContext) =>
      Effect.gen(function*() {
        let transcript = lines.join("\n\n")
        if (transcript.length > maxTranscriptChars) transcript = transcript.slice(-maxTranscriptChars)
        const answered = yield* completeJson(
          llm.complete,
          {
            ...(bot.model ? { model: bot.model } : {}),
            messages: [
              { role: "system", content: instructions },
              { role: "user", content: previous ? `Earlier summary:\n${previous}\n\nConversation since:\n${transcript}` : transcript }
            ],
            temperature: 0,
            usage
          },
          SummaryAnswer,
          { shape: summaryShape }
        )
        if (Option.isSome(answered.value)) return answered.value.value
        if (answered.text === "") return yield* new SummaryUnwritten({ detail: "The model answered nothing; try again" })
        yield* Effect.logWarning("The model answered no JSON summary; its text is kept as the summary")
        return { title: fallbackTitle, summary: answered.text }
      })

    /**
     * Summarises the session's messages after its current summary through `through` (all of them
     * when undefined) into its next summary version. Null when there is nothing to summarise.
     */
    const summarize = (
      sessionId: string,
      bot: Bot,
      options: {
        readonly through?: number
        readonly passiveMemory: boolean
        readonly trigger: "summarize" | "compaction" | "admin"
        readonly foldPrevious: boolean
      }
    ) =>
      Effect.gen(function*() {
        const current = yield* sessions.currentSummary(sessionId)
        const after = options.foldPrevious ? (current?.through ?? 0) : 0
        const rows = yield* sessions.transcript(sessionId, {
          after,
          ...(options.through !== undefined ? { through: options.through } : {})
        })
        const lines = transcriptLines(rows, options.passiveMemory)
        if (rows.length === 0 || lines.length === 0) return null
        const written = yield* write(bot, lines, options.foldPrevious ? (current?.summary ?? null) : null, {
          source: "agent",
          botId: bot.id,
          sessionId
        })
        const stored = yield* sessions.setSummary(
          sessionId,
          written.summary,
          { from: rows[0]!.seq, through: rows.at(-1)!.seq },
          options.trigger
        )
        return { ...stored, title: written.title }
      })

    /**
     * Compacts the history when it passes the threshold of `window` (tokens available for history):
     * the oldest turns into the summary, the newest kept. Answers the version it stored, or null.
     */
    const compactIfNeeded = (
      sessionId: string,
      bot: Bot,
      history: ReadonlyArray<HistoryRow>,
      window: number,
      passiveMemory: boolean,
      trigger: "compaction" | "admin" = "compaction"
    ) =>
      Effect.gen(function*() {
        const used = history.reduce((n, row) => n + messageTokens(row), 0)
        if (trigger === "compaction" && used <= window * config.threshold) return null
        const through = compactionCut(history, window * config.keep)
        if (through === null) return null
        const stored = yield* summarize(sessionId, bot, { through, passiveMemory, trigger, foldPrevious: true })
        return stored
      })

    return traced("Compaction", { summarize, compactIfNeeded } as const)
  }),
  dependencies: [Sessions.Default, Llm.Default]
}) {}
