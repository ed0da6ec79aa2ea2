/**
 * The fuzz test's cases: for one operation of `/openapi.json`, a valid-looking base request (a
 * sample drawn from its schemas, real ids where the test made the resource) and the bad inputs
 * derived from it, class by class. Deterministic: a seeded generator picks which cases an
 * operation keeps when it has more than the bound.
 */
import type { JsonSchema, Operation } from "./openapi.ts"

/** A small seeded generator (mulberry32). */
export const rng = (seed: number) => {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

export const hash = (text: string): number => {
  let h = 0x811c9dc5
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193)
  return h >>> 0
}

export interface Case {
  /** The class of bad input (see the test file's head). */
  readonly kind: string
  /** Which part it touched: a field, a parameter, or the whole body. */
  readonly target: string
  /** Path parameters as they go into the URL (already percent-encoded). */
  readonly path: Record<string, string>
  /** The query string without its `?` (already encoded). */
  readonly query: string
  readonly body?: string | Uint8Array
  readonly contentType?: string
  /** Sent without any credential. */
  readonly anonymous?: boolean
  /** The input is refused by nature: a 2xx is a failure too (a wrong content type on a JSON route). */
  readonly mustRefuse?: boolean
}

/** Values the test made, by the name of the field or parameter that would carry them. */
export interface Known {
  readonly pathId: (path: string, name: string) => string | undefined
  readonly field: Record<string, string>
}

/**
 * 10,000 characters that do not compress: a repeated letter would be compressed below the size
 * where an index entry overflows, and hide the failure it is meant to find.
 */
const longText = (seed: number, length = 10_000) => {
  const random = rng(seed)
  const letters = "abcdefghijklmnopqrstuvwxyz0123456789"
  let out = ""
  for (let i = 0; i < length; i++) out += letters[Math.floor(random() * letters.length)]
  return out
}
const LONG = longText(1)

const types = (schema: JsonSchema): Array<string> =>
  schema.type === undefined ? [] : Array.isArray(schema.type) ? [...schema.type] : [schema.type as string]

/** The first alternative that is not null, for a sample. */
const concrete = (schema: JsonSchema): JsonSchema => {
  const alts = schema.anyOf ?? schema.oneOf
  if (alts && alts.length > 0) return concrete(alts.find((s) => !types(s).includes("null") && s.const !== null) ?? alts[0]!)
  if (schema.allOf && schema.allOf.length > 0) {
    return schema.allOf.reduce<JsonSchema>(
      (acc, s) => {
        const c = concrete(s)
        return {
          ...acc,
          ...c,
          properties: { ...acc.properties, ...c.properties },
          required: [...(acc.required ?? []), ...(c.required ?? [])]
        }
      },
      {}
    )
  }
  return schema
}

const kindOf = (schema: JsonSchema): string => {
  const s = concrete(schema)
  if (s.enum || s.const !== undefined) return "enum"
  const t = types(s).filter((t) => t !== "null")
  if (t.length > 0) return t[0]!
  if (s.properties) return "object"
  if (s.items) return "array"
  return "unknown"
}

/** A value that should pass the schema, as far as a generic reading can tell. */
export const sample = (schema: JsonSchema, known: Known, name = "", depth = 0): unknown => {
  const s = concrete(schema)
  if (name in known.field) return known.field[name]
  if (s.const !== undefined) return s.const
  if (s.enum) return s.enum.find((v) => v !== null) ?? s.enum[0]
  switch (kindOf(s)) {
    case "string": {
      if (s.format === "uuid" || /uuid/i.test(s.description ?? "")) return "00000000-0000-4000-8000-000000000000"
      if (s.format === "date-time" || /date/i.test(s.description ?? "")) return "2026-01-01T00:00:00.000Z"
      const base = `fuzz${name.replace(/[^a-z0-9]/g, "")}`.slice(0, 20) || "fuzz"
      return base.padEnd(Math.max(s.minLength ?? 1, base.length), "a")
    }
    case "number":
    case "integer":
      return s.minimum ?? (s.exclusiveMinimum !== undefined ? s.exclusiveMinimum + 1 : 1)
    case "boolean":
      return false
    case "array":
      return s.minItems && s.items && depth < 4 ? Array.from({ length: s.minItems }, () => sample(s.items!, known, name, depth + 1)) : []
    case "object": {
      const out: Record<string, unknown> = {}
      if (depth < 4) { for (const key of s.required ?? []) out[key] = sample(s.properties?.[key] ?? {}, known, key, depth + 1) }
      return out
    }
    default:
      return "fuzz"
  }
}

/** The bad values for one field, by its schema's kind. */
const badValues = (schema: JsonSchema): Array<[string, unknown]> => {
  const common: Array<[string, unknown]> = [
    ["null", null],
    ["array-for-scalar", [1, "a", null]]
  ]
  switch (kindOf(schema)) {
    case "string":
      return [
        ["long-string", LONG],
        ["nul-escape", "a\u0000b"],
        ["lone-surrogate", "a\ud800b"],
        ["wrong-type:number", 12345],
        ["wrong-type:object", { a: 1 }],
        ...common
      ]
    case "number":
    case "integer":
      return [
        ["wrong-type:string", "abc"],
        ["negative", -1],
        ["huge-number", 1e308],
        ["beyond-int64", 9223372036854775808],
        ["beyond-int32", 2147483648],
        ["fraction", 1.5],
        ...common
      ]
    case "boolean":
      return [["wrong-type:string", "yes"], ["wrong-type:number", 1], ...common]
    case "enum":
      return [["unknown-enum", "not-a-member"], ["long-string", LONG], ["nul-escape", "a\u0000b"], ...common]
    case "array":
      return [
        ["object-for-array", { a: 1 }],
        ["array-of-wrong-items", [null, 1, "a", { a: [] }]],
        ["null", null]
      ]
    case "object":
      return [
        ["array-for-object", [1, 2]],
        ["string-for-object", "abc"],
        ["nul-escape", { "a\u0000b": "a\u0000b" }],
        ["lone-surrogate", { k: "\ud800" }],
        ["null", null]
      ]
    default:
      return [
        ["long-string", LONG],
        ["nul-escape", "a\u0000b"],
        ["lone-surrogate", "\ud800"],
        ["deep-value", nested(2_000)],
        ["null", null]
      ]
  }
}

/** `[[[…]]]` as a value, `depth` deep. */
const nested = (depth: number): unknown => {
  let v: unknown = []
  for (let i = 0; i < depth; i++) v = [v]
  return v
}

const deepText = (depth: number) => "[".repeat(depth) + "]".repeat(depth)
const deepObjectText = (depth: number) => "{\"a\":".repeat(depth) + "1" + "}".repeat(depth)

/** The cases of one operation: every whole-body class, then the field, query and path cases up to `bound`. */
export const casesFor = (op: Operation, known: Known, seed: number, bound: number): Array<Case> => {
  const random = rng(seed ^ hash(`${op.method} ${op.path}`))
  const pathNames = op.parameters.filter((p) => p.in === "path").map((p) => p.name)
  const basePath: Record<string, string> = {}
  for (const name of pathNames) basePath[name] = encodeURIComponent(known.pathId(op.path, name) ?? "fuzz")
  const queries = op.parameters.filter((p) => p.in === "query")
  const baseQuery = queries
    .filter((p) => p.required || p.name in known.field)
    .map((p) => `${p.name}=${encodeURIComponent(String(sample(p.schema, known, p.name)))}`)
  const query = (extra: string | undefined, without?: string) =>
    [...baseQuery.filter((q) => without === undefined || !q.startsWith(`${without}=`)), ...(extra === undefined ? [] : [extra])].join("&")
  const hasBody = op.body !== undefined || (op.bodyTypes.length === 0 && ["POST", "PUT", "PATCH"].includes(op.method))
  const jsonRoute = op.bodyTypes.includes("application/json")
  const base = op.body === undefined ? {} : sample(op.body, known)
  const baseBody = hasBody ? JSON.stringify(base) : undefined
  const make = (kind: string, target: string, parts: Partial<Case>): Case => ({
    kind,
    target,
    path: basePath,
    query: query(undefined),
    ...(baseBody !== undefined ? { body: baseBody, contentType: "application/json" } : {}),
    ...parts
  })

  const fixed: Array<Case> = [make("base", "-", {})]
  const optional: Array<Case> = []
  fixed.push(make("anonymous", "-", { anonymous: true }))

  if (hasBody) {
    const whole = (kind: string, body: string | Uint8Array, contentType: string | undefined, mustRefuse = false) =>
      fixed.push(
        make(kind, "body", { body, ...(contentType ? { contentType } : { contentType: undefined }), mustRefuse: mustRefuse && jsonRoute })
      )
    whole("deep-json:array", deepText(100_000), "application/json")
    whole("deep-json:object", deepObjectText(20_000), "application/json")
    whole("raw-nul", new TextEncoder().encode(`{"a":"x\u0000y"}`), "application/json")
    whole("nul-escape", JSON.stringify(base).replace(/^\{/, "{\"\\u0000\":\"\\u0000\","), "application/json")
    whole("lone-surrogate", `{"\\ud800":"\\udfff"}`, "application/json")
    whole("text-plain", baseBody ?? "hello", "text/plain", true)
    whole("form-urlencoded", "a=1&b=2", "application/x-www-form-urlencoded", true)
    whole("multipart-no-boundary", "--x\r\n\r\n--x--\r\n", "multipart/form-data", true)
    whole("empty-body", "", "application/json")
    whole("no-body", "", undefined)
    whole("json-null", "null", "application/json")
    whole("json-array", "[]", "application/json")
    whole("json-string", "\"abc\"", "application/json")
    whole("invalid-json", "{not json", "application/json")
    whole("huge-array", JSON.stringify(Array.from({ length: 100_000 }, () => null)), "application/json")
    fixed.push(make("anonymous:deep-json", "body", { anonymous: true, body: deepText(100_000), contentType: "application/json" }))
    fixed.push(make("anonymous:text-plain", "body", { anonymous: true, body: "hello", contentType: "text/plain" }))

    if (op.body === undefined) {
      // No declared schema (an integration's route reads any JSON): the common field names carry
      // over-long text, then wrong types, so what the handler passes on meets the same classes.
      const names = ["title", "content", "text", "name", "id", "message", "key", "path", "chat_guid", "channel_id", "bot_id", "session_id"]
      fixed.push(make("long-string", "body.*", { body: JSON.stringify(Object.fromEntries(names.map((n) => [n, LONG]))) }))
      fixed.push(
        make("wrong-type:mixed", "body.*", {
          body: JSON.stringify(Object.fromEntries(names.map((n, i) => [n, [12345, [1], { a: 1 }, true, null][i % 5]])))
        })
      )
    }
    const s = op.body === undefined ? undefined : concrete(op.body)
    if (s !== undefined && base !== null && typeof base === "object" && !Array.isArray(base)) {
      for (const key of s.required ?? []) {
        const { [key]: _dropped, ...rest } = base as Record<string, unknown>
        optional.push(make("missing-required", key, { body: JSON.stringify(rest) }))
      }
      const fields = (schema: JsonSchema, prefix: Array<string>, value: Record<string, unknown>, depth: number) => {
        const c = concrete(schema)
        for (const [key, field] of Object.entries(c.properties ?? {})) {
          const values = badValues(field)
          // One field of each operation gets the 100,000 invalid items (a 422 must list at most 50).
          if (kindOf(field) === "array" && !fixed.some((c) => c.kind === "huge-array-field")) {
            values.push(["huge-array-field", Array.from({ length: 100_000 }, () => null)])
          }
          for (const [kind, bad] of values) {
            const body = structuredClone(base) as Record<string, unknown>
            let at: Record<string, unknown> = body
            for (const p of prefix) at = at[p] as Record<string, unknown>
            at[key] = bad
            ;(kind === "huge-array-field" ? fixed : optional).push(make(kind, [...prefix, key].join("."), { body: JSON.stringify(body) }))
          }
          const inner = concrete(field)
          if (depth < 1 && kindOf(inner) === "object" && inner.properties) {
            const child = sample(inner, known, key) as Record<string, unknown>
            value[key] = child
            fields(inner, [...prefix, key], child, depth + 1)
          }
        }
      }
      fields(s, [], base as Record<string, unknown>, 0)
      optional.push(make("unknown-field", "body", { body: JSON.stringify({ ...(base as object), ["zz_" + LONG.slice(0, 100)]: LONG }) }))
    }
  }

  for (const p of queries) {
    const bad: Array<[string, string]> = [
      ["nul-query", "%00"],
      ["nul-query", "a%00b"],
      ["long-string", longText(2)],
      ["lone-surrogate", "%ED%A0%80"],
      ["wrong-type:string", "abc"],
      ["negative", "-1"],
      ["huge-number", "99999999999999999999999"],
      ["beyond-int32", "2147483648"],
      ["fraction", "1.5"],
      ["empty", ""],
      ["unknown-enum", "not-a-member"],
      ["bad-date", "2026-13-45T99:99"]
    ]
    for (const [kind, value] of bad) optional.push(make(kind, `query.${p.name}`, { query: query(`${p.name}=${value}`, p.name) }))
    optional.push(make("repeated-param", `query.${p.name}`, { query: query(`${p.name}=1&${p.name}=2`, p.name) }))
  }

  for (const name of pathNames) {
    const real = basePath[name]!
    const bad: Array<[string, string]> = [
      ["path-not-uuid", "not-a-uuid"],
      ["long-string", longText(3)],
      ["nul-path", "%00"],
      ["nul-path", `${real}%00`],
      ["lone-surrogate", "%ED%A0%80"],
      ["path-traversal", "..%2F..%2Fetc%2Fpasswd"],
      ["path-uuid-unknown", "00000000-0000-4000-8000-000000000000"],
      ["path-uuid-upper", "AAAAAAAA-AAAA-4AAA-8AAA-AAAAAAAAAAAA"],
      ["negative", "-1"],
      ["huge-number", "99999999999999999999999"]
    ]
    for (const [kind, value] of bad) fixed.push(make(kind, `path.${name}`, { path: { ...basePath, [name]: value } }))
  }

  // The bound keeps the run short: a seeded shuffle picks which field and query cases stay.
  for (let i = optional.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1))
    ;[optional[i], optional[j]] = [optional[j]!, optional[i]!]
  }
  return [...fixed, ...optional.slice(0, Math.max(0, bound - fixed.length))]
}

/** The URL of a case: the template's `{name}`s and its trailing `*` filled in. */
export const urlOf = (op: Operation, c: Case): string => {
  let path = op.path.replace(/\{([^}]+)\}/g, (_, name: string) => c.path[name] ?? "fuzz")
  if (path.endsWith("*")) path = path.slice(0, -1) + (c.path["*"] ?? "notes.md")
  return c.query ? `${path}?${c.query}` : path
}
