/**
 * `docs/routes.md` (every route of the API, its scope and each status it can answer) is the API
 * definition rendered, and cannot drift: this test renders it again from `CairnApi` and compares.
 * After an API change, rewrite it with `UPDATE_DOCS=1 npx vitest run test/core/routes.test.ts`.
 *
 * The statuses are the endpoint's declared ones (its success, its group's and its own errors, and
 * the errors every endpoint shares) with what the edge adds: 413 and 415 where a route takes a
 * body; a public route answers no 401 or 403 (it authenticates nobody). Every status it lists is
 * explained in docs/api.md ("Statuses"), with why where the spec's table has no row for it.
 */
import { OpenApi } from "@effect/platform"
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "vitest"
import { CairnApi } from "../../src/Api.ts"
import { documented, fromApi } from "../../src/auth/Catalogue.ts"
import { PUBLIC } from "../../src/auth/Scopes.ts"
import { root } from "../support/imports.ts"

type Json = Record<string, any>

const routesDoc = path.join(root, "docs", "routes.md")
const apiDoc = path.join(root, "docs", "api.md")

/** The statuses of one operation of the OpenAPI document, with the edge's. */
export const statusesOf = (operation: Json, scope: string): Array<number> => {
  const declared = Object.keys(operation.responses ?? {}).map(Number)
  const body = operation.requestBody?.content as Json | undefined
  const edge = body ? [413, ...(Object.keys(body).some((type) => type.includes("json")) ? [415] : [])] : []
  const unauthenticated = scope === PUBLIC ? new Set([401, 403]) : new Set<number>()
  return [...new Set([...declared, ...edge])].filter((status) => !unauthenticated.has(status)).sort((a, b) => a - b)
}

export const renderRoutes = (): string => {
  const catalogue = fromApi(CairnApi)
  const spec = OpenApi.fromApi(documented(CairnApi, catalogue)) as Json
  const rows: Array<string> = []
  let group = ""
  for (const entry of catalogue.entries) {
    if (entry.group !== group) {
      group = entry.group
      rows.push("", `## ${group}`, "", "| Route | Scope | Statuses |", "|---|---|---|")
    }
    const operation = spec.paths[entry.path.replace(/:(\w+)/g, "{$1}")]?.[entry.method.toLowerCase()] as Json
    rows.push(`| \`${entry.method} ${entry.path}\` | \`${entry.scope}\` | ${statusesOf(operation, entry.scope).join(", ")} |`)
  }
  return [
    "# Routes, scopes and statuses",
    "",
    "Every route of the API (integrations' own routes are listed by `GET /api/v1/discover` of the",
    "server that loads them), the scope it requires and each status it can answer. Generated from the",
    "API definition; `test/core/routes.test.ts` fails when it drifts and rewrites it with",
    "`UPDATE_DOCS=1`. What each status means, and why the few the spec's table lacks are used, is in",
    "[api.md](api.md#statuses).",
    ...rows,
    ""
  ].join("\n")
}

/** The statuses the "Statuses" section of docs/api.md explains: its `- **NNN**` items. */
export const explainedStatuses = (doc: string): Set<number> => {
  const section = doc.split(/^### Statuses\s*$/m)[1]?.split(/^#{2,3} /m)[0] ?? ""
  return new Set([...section.matchAll(/\*\*(\d{3})\*\*/g)].map((match) => Number(match[1])))
}

describe("docs/routes.md", () => {
  const rendered = renderRoutes()

  it("is the API definition rendered: every route, its scope and its statuses", () => {
    if (process.env.UPDATE_DOCS === "1") fs.writeFileSync(routesDoc, rendered)
    expect(fs.readFileSync(routesDoc, "utf8")).toBe(rendered)
  })

  it("lists only statuses docs/api.md explains", () => {
    const listed = new Set([...rendered.matchAll(/\| ([\d, ]+) \|$/gm)].flatMap((match) => match[1]!.split(", ").map(Number)))
    const explained = explainedStatuses(fs.readFileSync(apiDoc, "utf8"))
    expect([...listed].filter((status) => !explained.has(status))).toEqual([])
    // Probe: a status nobody explains is found.
    expect(explainedStatuses("### Statuses\n\n- **200** fine\n").has(418)).toBe(false)
  })

  it("a public route answers no 401 or 403; a route with a JSON body may answer 413 and 415", () => {
    expect(rendered).toMatch(/^\| `GET \/health` \| `public` \| (?![^|]*40[13])[^|]+\|$/m)
    expect(statusesOf({ responses: { 200: {}, 401: {} }, requestBody: { content: { "application/json": {} } } }, "chat")).toEqual([
      200,
      401,
      413,
      415
    ])
  })
})
