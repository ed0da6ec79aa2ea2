/**
 * The Gemini family: Google's Gemini API through Google's own SDK (`@google/genai`), blocking and
 * streamed, with thought summaries, embeddings and Gemini's usage and errors mapped onto Cairn's
 * (`GeminiWire.ts` has the shapes). Gemini's speech is multimodal input, not a transcription
 * endpoint: transcription fails as an invalid request naming what to use instead.
 */
import { ApiError, GoogleGenAI } from "@google/genai"
import type * as Genai from "@google/genai"
import { Effect } from "effect"
import { cairnVersion } from "../contract/Version.ts"
import { scrub } from "../secrets/Vault.ts"
import { type Family, type FamilyTarget, statusError, unreadableAnswer } from "./Family.ts"
import { finishReasonOf, generateBody, piecesOf, stateOf, usageOf } from "./GeminiWire.ts"
import { type ChatRequest, LlmError, type LlmFinished, type LlmStreamEvent, type ToolCall, type Usage } from "./Model.ts"
import { streamEvents } from "./SdkStream.ts"
import { secretsOf } from "./Secrets.ts"
import { toWireNames } from "./ToolNames.ts"

export interface GeminiConnection {
  readonly baseUrl: string
  readonly apiKey: string | undefined
  readonly headers: Readonly<Record<string, string>>
  readonly timeoutMs: number
}

interface GoogleErrorBody {
  readonly error?: {
    readonly message?: string
    readonly status?: string
    readonly details?: ReadonlyArray<{ readonly "@type"?: string; readonly retryDelay?: string }>
  }
}

const parseBody = (text: string): GoogleErrorBody | undefined => {
  try {
    return JSON.parse(text) as GoogleErrorBody
  } catch {
    return undefined
  }
}

/** Seconds of a google.rpc.RetryInfo's `retryDelay` ("3s", "1.5s"). */
const retryDelaySeconds = (body: GoogleErrorBody | undefined): number | undefined => {
  const delay = body?.error?.details?.find((d) => d["@type"]?.endsWith("google.rpc.RetryInfo"))?.retryDelay
  const seconds = delay ? Number.parseFloat(delay) : Number.NaN
  return Number.isFinite(seconds) && seconds >= 0 ? seconds : undefined
}

/** Gemini's failures as Cairn's: the SDK's ApiError carries the status and Google's error body as its message. */
export const geminiError = (target: FamilyTarget) => (error: unknown): LlmError => {
  if (error instanceof LlmError) return error
  const clean = (message: string) => scrub(message, secretsOf(target.provider))
  if (error instanceof ApiError) {
    const body = parseBody(error.message)
    const detail = clean(body?.error?.message || error.message)
    // Google answers a wrong key with a 400: it is the provider's credential, not the request, that is wrong.
    if (/API_KEY_INVALID|API key not valid/i.test(error.message)) return new LlmError({ kind: "upstream", status: 401, detail })
    return statusError(error.status, detail, error.status === 429 ? retryDelaySeconds(body) : undefined)
  }
  if (error instanceof Error && (error.name === "TimeoutError" || /timed? ?out/i.test(error.message))) {
    return new LlmError({ kind: "timeout", detail: `The provider did not answer in time (${target.id})` })
  }
  return unreadableAnswer(target, error, clean)
}

const streamed = <E>(
  ai: GoogleGenAI,
  target: FamilyTarget,
  request: ChatRequest,
  idleTimeoutMs: number,
  onEvents: (events: ReadonlyArray<LlmStreamEvent>) => Effect.Effect<void, E>
): Effect.Effect<LlmFinished, LlmError | E> =>
  Effect.suspend(() => {
    const names = toWireNames(request.tools, request.messages)
    const body = generateBody(target.model, request, names)
    let text = ""
    let usage: Usage | null = null
    let finish: string | undefined
    const calls: Array<{ call: ToolCall; signature?: string }> = []
    const handle = (chunk: Genai.GenerateContentResponse, out: Array<LlmStreamEvent>) => {
      const pieces = piecesOf(chunk, names, calls.length)
      if (pieces.thoughts) out.push({ _tag: "ReasoningDelta", text: pieces.thoughts })
      if (pieces.text) {
        text += pieces.text
        out.push({ _tag: "TextDelta", text: pieces.text })
      }
      for (const entry of pieces.calls) {
        out.push({
          _tag: "ToolCallDelta",
          index: calls.length,
          id: entry.call.id,
          name: entry.call.name,
          argumentsDelta: entry.call.arguments
        })
        calls.push(entry)
      }
      finish = pieces.finishReason ?? finish
      usage = usageOf(chunk.usageMetadata) ?? usage
    }
    return streamEvents({
      open: (signal) => ai.models.generateContentStream({ ...body, config: { ...body.config, abortSignal: signal } }),
      idleTimeoutMs,
      idle: () => new LlmError({ kind: "timeout", detail: `The provider stopped sending (${target.id})` }),
      toError: geminiError(target),
      handle,
      onEvents
    }).pipe(
      Effect.map((): LlmFinished => {
        const providerState = stateOf(calls)
        return {
          _tag: "Finished",
          model: target.id,
          text,
          toolCalls: calls.map((entry) => entry.call),
          usage,
          finishReason: finishReasonOf(finish, calls.length > 0),
          ...(providerState ? { providerState } : {})
        }
      })
    )
  })

export const geminiFamily = (connection: GeminiConnection): Family => {
  const ai = new GoogleGenAI({
    apiKey: connection.apiKey ?? "none",
    // Thinking, thought summaries and function-call ids are v1beta's (named: the SDK's default moved to v1 in 3.x).
    apiVersion: "v1beta",
    httpOptions: {
      baseUrl: connection.baseUrl.replace(/\/v1(beta)?\/?$/, ""),
      timeout: connection.timeoutMs,
      headers: { "user-agent": `cairn/${cairnVersion}`, ...connection.headers }
    }
  })
  return {
    chat: (target, request) => {
      const names = toWireNames(request.tools, request.messages)
      const body = generateBody(target.model, request, names)
      return Effect.tryPromise({
        try: (signal) => ai.models.generateContent({ ...body, config: { ...body.config, abortSignal: signal } }),
        catch: geminiError(target)
      }).pipe(
        Effect.map((response) => {
          const pieces = piecesOf(response, names, 0)
          const providerState = stateOf(pieces.calls)
          return {
            content: pieces.text,
            toolCalls: pieces.calls.map((entry) => entry.call),
            usage: usageOf(response.usageMetadata),
            finishReason: finishReasonOf(pieces.finishReason, pieces.calls.length > 0),
            ...(pieces.thoughts ? { reasoning: pieces.thoughts } : {}),
            ...(providerState ? { providerState } : {})
          }
        })
      )
    },
    chatStream: (target, request, idleTimeoutMs, onEvents) => streamed(ai, target, request, idleTimeoutMs, onEvents),
    embed: (target, input) =>
      Effect.tryPromise({
        try: (signal) => ai.models.embedContent({ model: target.model, contents: [...input], config: { abortSignal: signal } }),
        catch: geminiError(target)
      }).pipe(
        Effect.flatMap((reply) => {
          const embeddings = reply.embeddings ?? []
          if (embeddings.length !== input.length || embeddings.some((e) => !Array.isArray(e.values))) {
            return Effect.fail(geminiError(target)(new SyntaxError(`expected ${input.length} embeddings`)))
          }
          return Effect.succeed({ embeddings: embeddings.map((e) => e.values!), usage: null })
        })
      ),
    transcribe: (target) =>
      Effect.fail(
        new LlmError({
          kind: "invalid_request",
          detail:
            `${target.id} is a Gemini model: Gemini hears audio in a chat (a bot's audio_input "native"), it has no transcription endpoint`
        })
      ),
    models: (provider, timeoutMs) =>
      Effect.tryPromise({
        try: async (signal) => {
          const ids: Array<string> = []
          const pager = await ai.models.list({ config: { pageSize: 100, abortSignal: signal, httpOptions: { timeout: timeoutMs } } })
          for await (const model of pager) if (model.name) ids.push(model.name.replace(/^models\//, ""))
          return ids
        },
        catch: (error) => scrub(error instanceof Error ? error.message : String(error), secretsOf(provider))
      })
  }
}
