/**
 * An MCP tool result as the text a Cairn tool answers: text parts joined by newlines, other parts
 * summarised (`[image image/png]`), the structured content when there is nothing else to say.
 */

/** The parts of a `tools/call` result read here (a server may send any of them, or none). */
export interface McpToolResult {
  readonly content?: ReadonlyArray<{ readonly type: string; readonly [key: string]: unknown }>
  readonly structuredContent?: unknown
  readonly isError?: boolean
  /** The protocol's first version answered this instead of `content`. */
  readonly toolResult?: unknown
}

const str = (value: unknown): string | undefined => (typeof value === "string" && value.length > 0 ? value : undefined)

const partText = (part: { readonly type: string; readonly [key: string]: unknown }): string => {
  switch (part.type) {
    case "text":
      return typeof part.text === "string" ? part.text : ""
    case "image":
    case "audio":
      return `[${part.type} ${str(part.mimeType) ?? "unknown type"}]`
    case "resource": {
      const resource = (part.resource ?? {}) as Record<string, unknown>
      if (typeof resource.text === "string") return resource.text
      return `[resource ${str(resource.uri) ?? ""}${str(resource.mimeType) ? ` ${resource.mimeType}` : ""}]`.replace(" ]", "]")
    }
    case "resource_link":
      return `[resource link ${str(part.uri) ?? ""}${str(part.name) ? ` (${part.name})` : ""}]`
    default:
      return `[${part.type}]`
  }
}

export const renderResult = (result: McpToolResult): string => {
  const parts = (result.content ?? []).map(partText).filter((text) => text.length > 0)
  if (parts.length > 0) return parts.join("\n")
  if (result.structuredContent !== undefined) return JSON.stringify(result.structuredContent)
  if (result.toolResult !== undefined) return typeof result.toolResult === "string" ? result.toolResult : JSON.stringify(result.toolResult)
  return ""
}
