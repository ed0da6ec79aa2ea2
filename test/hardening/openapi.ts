/**
 * The fuzz test's reading of `/openapi.json`: every operation with its path, query and JSON body
 * schemas, `$ref`s resolved into `components` (a cycle stops at the second visit of a reference).
 */

export type JsonSchema = {
  readonly $ref?: string
  readonly type?: string | ReadonlyArray<string>
  readonly enum?: ReadonlyArray<unknown>
  readonly const?: unknown
  readonly properties?: Record<string, JsonSchema>
  readonly required?: ReadonlyArray<string>
  readonly items?: JsonSchema
  readonly prefixItems?: ReadonlyArray<JsonSchema>
  readonly additionalProperties?: boolean | JsonSchema
  readonly anyOf?: ReadonlyArray<JsonSchema>
  readonly oneOf?: ReadonlyArray<JsonSchema>
  readonly allOf?: ReadonlyArray<JsonSchema>
  readonly minLength?: number
  readonly maxLength?: number
  readonly minimum?: number
  readonly maximum?: number
  readonly exclusiveMinimum?: number
  readonly minItems?: number
  readonly format?: string
  readonly pattern?: string
  readonly description?: string
}

export interface Parameter {
  readonly name: string
  readonly in: "path" | "query" | "header" | "cookie"
  readonly required: boolean
  readonly schema: JsonSchema
}

export interface Operation {
  readonly method: string
  /** The template as the document has it: `/api/v1/bots/{id}`, or a trailing `*` wildcard. */
  readonly path: string
  readonly parameters: ReadonlyArray<Parameter>
  /** The JSON body schema, resolved; undefined when the operation declares none. */
  readonly body: JsonSchema | undefined
  /** Every content type the request body declares (empty: none declared). */
  readonly bodyTypes: ReadonlyArray<string>
  readonly isPublic: boolean
}

export interface OpenApiDocument {
  readonly paths: Record<string, Record<string, any>>
  readonly components?: { readonly schemas?: Record<string, JsonSchema> }
}

const METHODS = ["get", "put", "post", "patch", "delete"]

/** Resolves every `$ref` below `schema` (a reference met again on the same branch is left as `{}`). */
export const resolve = (doc: OpenApiDocument, schema: JsonSchema | undefined, seen: ReadonlySet<string> = new Set()): JsonSchema => {
  if (schema === undefined || schema === null || typeof schema !== "object") return {}
  if (schema.$ref) {
    if (seen.has(schema.$ref)) return {}
    const name = schema.$ref.replace(/^#\/components\/schemas\//, "")
    const target = doc.components?.schemas?.[name]
    if (!target) throw new Error(`Unresolvable reference ${schema.$ref}`)
    return resolve(doc, target, new Set([...seen, schema.$ref]))
  }
  const out: Record<string, unknown> = { ...schema }
  if (schema.properties) out.properties = Object.fromEntries(Object.entries(schema.properties).map(([k, v]) => [k, resolve(doc, v, seen)]))
  if (schema.items) out.items = resolve(doc, schema.items, seen)
  if (schema.prefixItems) out.prefixItems = schema.prefixItems.map((s) => resolve(doc, s, seen))
  if (schema.additionalProperties && typeof schema.additionalProperties === "object") {
    out.additionalProperties = resolve(doc, schema.additionalProperties, seen)
  }
  for (const key of ["anyOf", "oneOf", "allOf"] as const) if (schema[key]) out[key] = schema[key]!.map((s) => resolve(doc, s, seen))
  return out as JsonSchema
}

export const operations = (doc: OpenApiDocument): Array<Operation> => {
  const out: Array<Operation> = []
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const method of METHODS) {
      const op = item[method]
      if (!op) continue
      const parameters: Array<Parameter> = [...(item.parameters ?? []), ...(op.parameters ?? [])].map((p: any) => ({
        name: p.name,
        in: p.in,
        required: p.required === true,
        schema: resolve(doc, p.schema)
      }))
      const content = op.requestBody?.content ?? {}
      const json = content["application/json"]?.schema
      out.push({
        method: method.toUpperCase(),
        path,
        parameters,
        body: json === undefined ? undefined : resolve(doc, json),
        bodyTypes: Object.keys(content),
        isPublic: !op.security || op.security.length === 0 || op["x-required-scope"] === "public"
      })
    }
  }
  return out
}
