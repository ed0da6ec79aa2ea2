/**
 * Tool names on the wire to a provider. OpenAI (and the APIs modelled on it) take function names
 * of 1-64 letters, digits, `_` and `-` only, while Cairn's may hold more (`mcp:github/search`).
 * A name the providers would refuse is sent as a stand-in (its characters replaced, shortened,
 * with a hash of the real name so two names never meet), and the model's tool calls are read back
 * to the real name. The same name always gets the same stand-in, so a turn's history and its
 * offered tools agree.
 */
import * as crypto from "node:crypto"
import type { ChatMessage, ToolCall, ToolSchema } from "./Model.ts"

const wireSafe = /^[a-zA-Z0-9_-]{1,64}$/

/** The name a provider is given for a tool: the name itself when the provider takes it. */
export const wireToolName = (name: string): string => {
  if (wireSafe.test(name)) return name
  const hash = crypto.createHash("sha256").update(name).digest("hex").slice(0, 8)
  return `${name.replace(/[^a-zA-Z0-9_-]/g, "_").slice(0, 64 - hash.length - 1)}_${hash}`
}

export interface WireNames {
  readonly tools: ReadonlyArray<ToolSchema> | undefined
  readonly messages: ReadonlyArray<ChatMessage>
  /** A tool call the model made, with the tool's real name. */
  readonly toolCallBack: (call: ToolCall) => ToolCall
}

/** A request's tools and history with wire names, and the way back for the answer's tool calls. */
export const toWireNames = (tools: ReadonlyArray<ToolSchema> | undefined, messages: ReadonlyArray<ChatMessage>): WireNames => {
  const back = new Map<string, string>()
  const wireTools = tools?.map((tool) => {
    const wire = wireToolName(tool.function.name)
    if (wire === tool.function.name) return tool
    back.set(wire, tool.function.name)
    return { ...tool, function: { ...tool.function, name: wire } }
  })
  if (back.size === 0 && !messages.some((message) => message.tool_calls?.some((call) => !wireSafe.test(call.function.name)))) {
    return { tools, messages, toolCallBack: (call) => call }
  }
  const wireMessages = messages.map((message) =>
    message.tool_calls?.some((call) => !wireSafe.test(call.function.name))
      ? {
        ...message,
        tool_calls: message.tool_calls.map((call) => ({ ...call, function: { ...call.function, name: wireToolName(call.function.name) } }))
      }
      : message
  )
  return {
    tools: wireTools,
    messages: wireMessages,
    toolCallBack: (call) => {
      const real = back.get(call.name)
      return real === undefined ? call : { ...call, name: real }
    }
  }
}
