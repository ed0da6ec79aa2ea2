/**
 * A tool declared with Schemas, as a model or an MCP client sees it: the JSON Schema of its
 * arguments (and result) derived from the Schema, and a decode failure said as short text a model
 * can act on. Used by the bots' tools (agent/Tool.ts) and Cairn's own MCP server alike.
 * Contract-safe: effect only.
 */
import { JSONSchema, ParseResult, Schema, SchemaAST } from "effect"

/**
 * What a tool call does beyond answering: `read` changes nothing and sends nothing out; `write`
 * changes what the server keeps (files, notes, todos, a workflow run); `egress` can reach or
 * change something outside the server (a URL, another service). A tool that does not say is
 * `egress`, the class every check treats most carefully.
 */
export const EffectClass = Schema.Literal("read", "write", "egress").annotations({
  identifier: "ToolEffectClass",
  description: "What a call does beyond answering: read, write (what the server keeps) or egress (outside the server)"
})
export type EffectClass = typeof EffectClass.Type

/** A JSON Schema of an object, the form of every tool's parameters. */
export interface ObjectJsonSchema {
  readonly type: "object"
  readonly properties: Record<string, unknown>
  readonly required?: ReadonlyArray<string>
  readonly [key: string]: unknown
}

/** Effect marks unknown values with `$id: "/schemas/unknown"`: repeated, validators reject the schema. */
const dropIds = (node: unknown): unknown => {
  if (Array.isArray(node)) return node.map(dropIds)
  if (node === null || typeof node !== "object") return node
  return Object.fromEntries(
    Object.entries(node).filter(([key]) => key !== "$id" && key !== "$schema").map(([key, value]) => [key, dropIds(value)])
  )
}

/** A tool's input or output schema: a JSON Schema object derived from its Schema. */
export const toolJsonSchema = (schema: Schema.Schema<any, any>): ObjectJsonSchema => {
  const { ast } = schema
  // An empty Struct is TypeScript's `{}`, which Effect renders as "object or array"; tools want an object.
  if (SchemaAST.isTypeLiteral(ast) && ast.propertySignatures.length === 0 && ast.indexSignatures.length === 0) {
    return { type: "object", properties: {}, additionalProperties: false }
  }
  const derived = dropIds(JSONSchema.make(schema)) as Record<string, unknown>
  return { ...derived, type: "object", properties: (derived.properties as Record<string, unknown> | undefined) ?? {} }
}

/** Every problem of a decode, as `field: message`, joined: what the caller is told to fix. */
export const argumentIssues = (error: ParseResult.ParseError): string =>
  ParseResult.ArrayFormatter.formatErrorSync(error)
    .map((issue) => (issue.path.length > 0 ? `${issue.path.join(".")}: ${issue.message}` : issue.message))
    .join("; ")
