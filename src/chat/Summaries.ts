/**
 * `POST /sessions/{id}/summarize`: the session's model writes a title and a summary of the
 * conversation so far; the summary is stored and context assembly sends it in place of the messages
 * it covers, so a long session keeps its gist within the model's window.
 */
import type { PrincipalShape } from "../auth/Principal.ts"
import { Effect, Schema } from "effect"
import { Bots } from "../bots/Bots.ts"
import { ValidationError } from "../contract/Errors.ts"
import { ProviderFailed } from "../providers/Errors.ts"
import { httpError } from "../providers/Http.ts"
import { Llm } from "../providers/Llm.ts"
import { Sessions } from "../sessions/Sessions.ts"
import { traced } from "../telemetry/Spans.ts"

/** What the model is asked to answer. */
const SummaryAnswer = Schema.Struct({ title: Schema.String.pipe(Schema.minLength(1)), summary: Schema.String.pipe(Schema.minLength(1)) })
const decodeAnswer = Schema.decodeUnknownEither(Schema.parseJson(SummaryAnswer))

/** The transcript the model reads is cut to its newest part past this many characters. */
const maxTranscriptChars = 60_000

const instructions =
  "Summarize the conversation below for the assistant that continues it. Keep facts, decisions, open questions, names and numbers; " +
  'leave out greetings. Answer with JSON only: {"title": "<at most 8 words>", "summary": "<at most 200 words>"}.'

export class Summaries extends Effect.Service<Summaries>()("cairn/Summaries", {
  effect: Effect.gen(function* () {
    const sessions = yield* Sessions
    const bots = yield* Bots
    const llm = yield* Llm

    const summarize = (principal: PrincipalShape, sessionId: string) =>
      Effect.gen(function* () {
        const session = yield* sessions.reach(principal, sessionId)
        const all = yield* sessions.transcript(sessionId)
        const rows = all.filter((row) => (row.role === "user" || row.role === "assistant") && row.content?.trim())
        if (rows.length === 0) return yield* ValidationError.single(["path", "id"], "The session has no messages to summarize", "empty_session")
        const bot = yield* bots.get(session.bot_id)
        let transcript = rows.map((row) => `${row.role === "user" ? "User" : "Assistant"}: ${row.content!.trim()}`).join("\n\n")
        if (transcript.length > maxTranscriptChars) transcript = transcript.slice(-maxTranscriptChars)
        const answer = yield* llm
          .complete({
            ...(bot.model ? { model: bot.model } : {}),
            messages: [
              { role: "system", content: instructions },
              { role: "user", content: transcript }
            ],
            temperature: 0,
            extra: { response_format: { type: "json_object" } },
            usage: { source: "agent", botId: bot.id, sessionId }
          })
          .pipe(Effect.mapError(httpError))
        const decoded = decodeAnswer(answer.content)
        if (decoded._tag === "Left") {
          return yield* new ProviderFailed({ detail: "The model did not answer with a title and a summary; try again" })
        }
        const { title, summary } = decoded.right
        // Everything up to the newest message read is covered, tool messages included.
        yield* sessions.setSummary(sessionId, summary.trim(), all.at(-1)!.seq)
        return { title: title.trim(), summary: summary.trim() }
      })

    return traced("Summaries", { summarize } as const)
  }),
  dependencies: [Sessions.Default, Bots.Default, Llm.Default]
}) {}
