/**
 * The markdown API reference `GET /api/v1/discover?detail=true` answers: every endpoint the caller
 * may use with its scope, parameters, request body and responses, rendered from the OpenAPI
 * document, followed by the schemas those endpoints refer to.
 */
import type { OpenApi } from "@effect/platform"
import type { CatalogueEntry } from "../auth/Catalogue.ts"

type Json = Record<string, any>

const openApiPath = (routePath: string) => routePath.replace(/:(\w+)/g, "{$1}")

/** Every `#/components/schemas/X` a value refers to, transitively. */
const collectRefs = (node: unknown, components: Json, into: Set<string>): void => {
  if (Array.isArray(node)) return node.forEach((item) => collectRefs(item, components, into))
  if (node === null || typeof node !== "object") return
  for (const [key, value] of Object.entries(node as Json)) {
    if (key === "$ref" && typeof value === "string" && value.startsWith("#/components/schemas/")) {
      const name = value.slice("#/components/schemas/".length)
      if (!into.has(name)) {
        into.add(name)
        collectRefs(components[name], components, into)
      }
    } else {
      collectRefs(value, components, into)
    }
  }
}

const schemaText = (schema: unknown) => "```json\n" + JSON.stringify(schema, null, 2) + "\n```"

const typeOf = (schema: Json | undefined): string => {
  if (!schema) return "any"
  if (schema.$ref) return String(schema.$ref).split("/").pop()!
  if (schema.type) return schema.format ? `${schema.type} (${schema.format})` : String(schema.type)
  if (schema.anyOf) return (schema.anyOf as Array<Json>).map(typeOf).join(" | ")
  return "any"
}

export const renderReference = (
  spec: OpenApi.OpenAPISpec,
  entries: ReadonlyArray<CatalogueEntry>,
  title = "Cairn API reference"
): string => {
  const components: Json = (spec.components as Json | undefined)?.schemas ?? {}
  const referenced = new Set<string>()
  const lines: Array<string> = [
    `# ${title}`,
    "",
    "Authenticate with `Authorization: Bearer <token>`. Each endpoint names the scope it requires:",
    "`public` needs no credentials, `authenticated` accepts any valid credential.",
    "Errors are `{\"detail\": string}`; validation errors are 422 with `detail` a list of `{loc, msg, type}`.",
    ""
  ]
  for (const entry of entries) {
    const operation: Json | undefined = (spec.paths as Json)[openApiPath(entry.path)]?.[entry.method.toLowerCase()]
    lines.push(`## ${entry.method} ${entry.path}`, "", entry.description, "", `- Scope: \`${entry.scope}\``)
    if (!operation) {
      lines.push("")
      continue
    }
    collectRefs(operation, components, referenced)
    const parameters: Array<Json> = operation.parameters ?? []
    for (const place of ["path", "query", "header"]) {
      const here = parameters.filter((p) => p.in === place)
      if (here.length === 0) continue
      lines.push(`- ${place[0]!.toUpperCase()}${place.slice(1)} parameters:`)
      for (const p of here) lines.push(`  - \`${p.name}\` (${typeOf(p.schema)}${p.required ? ", required" : ""})`)
    }
    const body: Json | undefined = operation.requestBody?.content
    if (body) {
      for (const [contentType, media] of Object.entries(body)) {
        lines.push(`- Request body (${contentType}):`, "", schemaText((media as Json).schema), "")
      }
    }
    lines.push("- Responses:")
    for (const [status, response] of Object.entries((operation.responses ?? {}) as Json)) {
      const content = (response as Json).content as Json | undefined
      const schemas = content ? Object.values(content).map((media) => typeOf((media as Json).schema)) : []
      lines.push(`  - ${status}: ${(response as Json).description ?? ""}${schemas.length ? ` (${schemas.join(", ")})` : ""}`)
    }
    lines.push("")
  }
  if (referenced.size > 0) {
    lines.push("# Schemas", "")
    for (const name of [...referenced].sort()) lines.push(`## ${name}`, "", schemaText(components[name]), "")
  }
  return lines.join("\n")
}
