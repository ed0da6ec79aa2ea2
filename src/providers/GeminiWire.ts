/**
 * Cairn's chat request in Gemini's shape (`contents`, `systemInstruction`, function declarations),
 * and Gemini's answer back in Cairn's.
 *
 * What maps to what:
 * - system messages at the start become the system instruction; a later one, user text marked as
 *   the system's; the assistant is Gemini's `model` role; same-role neighbours are merged;
 * - images and audio travel inline (`inlineData`) from a `data:` URL, an image by URL as `fileData`;
 * - tool calls are `functionCall` parts (with the thought signature Gemini gave each, sent back
 *   only to Gemini), tool results `functionResponse` parts named after their call;
 * - tool parameters go as JSON Schema (`parametersJsonSchema`), as Cairn declares them;
 * - thinking: with a budget, `thinkingConfig` asks for the budget and the thought summaries.
 */
import type * as Genai from "@google/genai"
import { argumentsObject, dataUrlParts, textOf, tokens } from "./Family.ts"
import type { ChatMessage, ChatRequest, ContentPart, ProviderState, ToolCall, Usage } from "./Model.ts"
import type { WireNames } from "./ToolNames.ts"

export const geminiFamilyName = "gemini"

/** Ids Cairn made for calls Gemini sent without one: never sent back as if Gemini had named them. */
const madeIdPrefix = "gemini-call-"
export const madeCallId = (index: number) => `${madeIdPrefix}${Date.now().toString(36)}-${index}`

const mimeByExtension: Readonly<Record<string, string>> = {
  png: "image/png",
  jpg: "image/jpeg",
  jpeg: "image/jpeg",
  gif: "image/gif",
  webp: "image/webp",
  heic: "image/heic"
}

const partOf = (part: ContentPart): Genai.Part => {
  switch (part.type) {
    case "text":
      return { text: part.text }
    case "image_url": {
      const inline = dataUrlParts(part.image_url.url)
      if (inline) return { inlineData: { mimeType: inline.mediaType, data: inline.data } }
      const extension = /\.([a-z0-9]+)(?:$|\?)/i.exec(part.image_url.url)?.[1]?.toLowerCase() ?? ""
      return { fileData: { fileUri: part.image_url.url, mimeType: mimeByExtension[extension] ?? "image/jpeg" } }
    }
    case "input_audio":
      return { inlineData: { mimeType: `audio/${part.input_audio.format}`, data: part.input_audio.data } }
  }
}

const partsOf = (content: ChatMessage["content"]): Array<Genai.Part> => {
  if (content === null) return []
  if (typeof content === "string") return content.length > 0 ? [{ text: content }] : []
  return content.map(partOf)
}

const push = (out: Array<Genai.Content>, role: "user" | "model", parts: Array<Genai.Part>) => {
  if (parts.length === 0) return
  const last = out[out.length - 1]
  if (last && last.role === role) last.parts!.push(...parts)
  else out.push({ role, parts })
}

const signatureOf = (state: ProviderState | undefined, id: string) =>
  state?.family === geminiFamilyName ? state.signatures?.[id] : undefined

export interface GeminiBody {
  readonly model: string
  readonly contents: Array<Genai.Content>
  readonly config: Genai.GenerateContentConfig
}

/** The generateContent parameters for `request` (tools and history already in wire names). */
export const generateBody = (model: string, request: ChatRequest, names: WireNames): GeminiBody => {
  const system: Array<string> = []
  const contents: Array<Genai.Content> = []
  const callNames = new Map<string, string>()
  for (const message of names.messages) {
    switch (message.role) {
      case "system": {
        const text = textOf(message.content)
        if (contents.length === 0) system.push(text)
        else push(contents, "user", [{ text: `[System notice] ${text}` }])
        break
      }
      case "user":
        push(contents, "user", partsOf(message.content))
        break
      case "assistant": {
        const calls = (message.tool_calls ?? []).map((call): Genai.Part => {
          callNames.set(call.id, call.function.name)
          const signature = signatureOf(message.providerState, call.id)
          return {
            functionCall: {
              ...(call.id.startsWith(madeIdPrefix) ? {} : { id: call.id }),
              name: call.function.name,
              args: argumentsObject(call.function.arguments)
            },
            ...(signature ? { thoughtSignature: signature } : {})
          }
        })
        push(contents, "model", [...partsOf(message.content), ...calls])
        break
      }
      case "tool": {
        const id = message.tool_call_id ?? ""
        const text = textOf(message.content)
        push(contents, "user", [{
          functionResponse: {
            ...(id && !id.startsWith(madeIdPrefix) ? { id } : {}),
            name: callNames.get(id) ?? message.name ?? "tool",
            response: { result: text }
          }
        }])
        break
      }
    }
  }
  const budget = request.thinkingBudgetTokens ?? 0
  const declarations = (names.tools ?? []).map((tool): Genai.FunctionDeclaration => ({
    name: tool.function.name,
    ...(tool.function.description ? { description: tool.function.description } : {}),
    parametersJsonSchema: tool.function.parameters
  }))
  // OpenAI's JSON mode is Gemini's JSON response type; a JSON schema its response schema.
  const { stream: _stream, response_format: format, ...extra } = request.extra ?? {}
  const answer = format as { type?: unknown; json_schema?: { schema?: unknown } } | undefined
  const json = answer?.type === "json_object" || answer?.type === "json_schema"
  const schema = answer?.type === "json_schema" ? answer.json_schema?.schema : undefined
  return {
    model,
    contents,
    config: {
      ...(extra as Genai.GenerateContentConfig),
      ...(system.length > 0 ? { systemInstruction: system.join("\n\n") } : {}),
      ...(declarations.length > 0 ? { tools: [{ functionDeclarations: declarations }] } : {}),
      ...(request.temperature !== undefined ? { temperature: request.temperature } : {}),
      ...(request.max_tokens !== undefined ? { maxOutputTokens: request.max_tokens } : {}),
      ...(json ? { responseMimeType: "application/json" } : {}),
      ...(schema !== undefined ? { responseJsonSchema: schema } : {}),
      ...(budget > 0 ? { thinkingConfig: { thinkingBudget: budget, includeThoughts: true } } : {})
    }
  }
}

export const finishReasonOf = (reason: string | null | undefined, calledTools: boolean): string | null => {
  if (calledTools) return "tool_calls"
  switch (reason) {
    case undefined:
    case null:
      return null
    case "STOP":
      return "stop"
    case "MAX_TOKENS":
      return "length"
    case "SAFETY":
    case "RECITATION":
    case "BLOCKLIST":
    case "PROHIBITED_CONTENT":
    case "SPII":
    case "IMAGE_SAFETY":
      return "content_filter"
    default:
      return reason.toLowerCase()
  }
}

/** Gemini's usage: thoughts are billed as output; the cached part of the prompt is reported apart. */
export const usageOf = (usage: Genai.GenerateContentResponseUsageMetadata | undefined): Usage | null => {
  if (!usage) return null
  const prompt = tokens(usage.promptTokenCount) ?? 0
  const completion = (tokens(usage.candidatesTokenCount) ?? 0) + (tokens(usage.thoughtsTokenCount) ?? 0)
  const cached = tokens(usage.cachedContentTokenCount) ?? 0
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: tokens(usage.totalTokenCount) ?? prompt + completion,
    ...(cached > 0 ? { cache_read_tokens: Math.min(cached, prompt) } : {})
  }
}

/** What one response (a whole answer, or one chunk of a stream) holds. */
export interface GeminiPieces {
  readonly text: string
  readonly thoughts: string
  readonly calls: ReadonlyArray<{ readonly call: ToolCall; readonly signature?: string }>
  readonly finishReason: string | undefined
}

export const piecesOf = (response: Genai.GenerateContentResponse, names: WireNames, callsSoFar: number): GeminiPieces => {
  const candidate = response.candidates?.[0]
  let text = ""
  let thoughts = ""
  const calls: Array<{ call: ToolCall; signature?: string }> = []
  for (const part of candidate?.content?.parts ?? []) {
    if (part.functionCall) {
      const id = part.functionCall.id || madeCallId(callsSoFar + calls.length)
      const call = names.toolCallBack({ id, name: part.functionCall.name ?? "", arguments: JSON.stringify(part.functionCall.args ?? {}) })
      calls.push(part.thoughtSignature ? { call, signature: part.thoughtSignature } : { call })
    } else if (typeof part.text === "string") {
      if (part.thought) thoughts += part.text
      else text += part.text
    }
  }
  const blocked = response.promptFeedback?.blockReason
  return { text, thoughts, calls, finishReason: candidate?.finishReason ?? (blocked ? "PROHIBITED_CONTENT" : undefined) }
}

export const stateOf = (calls: ReadonlyArray<{ readonly call: ToolCall; readonly signature?: string }>): ProviderState | undefined => {
  const signed = calls.filter((entry) => entry.signature)
  return signed.length > 0
    ? { family: geminiFamilyName, signatures: Object.fromEntries(signed.map((entry) => [entry.call.id, entry.signature!])) }
    : undefined
}
