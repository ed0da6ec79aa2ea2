/**
 * The error bodies of the spec: `{"detail": string}` for every status, and for 422 a list of
 * `{loc, msg, type}`. Here are the errors every endpoint may answer (422, 401, 403, a 404 for an
 * unknown route or id, 429) and `detailBody`, with which a domain declares its own errors
 * (`<domain>/Errors.ts`, each carrying its status) on its API group. Part of the contract: it
 * imports only `effect` and `@effect/platform`.
 */
import { HttpApiSchema } from "@effect/platform"
import { Option, Schema, SchemaAST as AST } from "effect"

export class ValidationIssue extends Schema.Class<ValidationIssue>("ValidationIssue")({
  loc: Schema.Array(Schema.Union(Schema.String, Schema.Number)),
  msg: Schema.String,
  type: Schema.String
}) {}

/**
 * Where an issue is, as a person reads it: its `loc` without the part of the request it starts
 * with (`["body", "messages", 0, "role"]` is `messages.0.role`); empty for the request as a whole.
 */
export const issuePath = (loc: ReadonlyArray<unknown>): string =>
  loc.filter((part, index) => !(index === 0 && ["body", "header", "query", "path"].includes(String(part)))).join(".")

/** A 422: `detail` lists every problem found. */
export class ValidationError extends Schema.TaggedError<ValidationError>()("ValidationError", {
  detail: Schema.Array(ValidationIssue)
}) {
  /** One issue at a location, for validation done by hand in a handler or service. */
  static single(loc: ReadonlyArray<string | number>, msg: string, type = "value_error") {
    return new ValidationError({ detail: [new ValidationIssue({ loc, msg, type })] })
  }
}

export class Unauthorized extends Schema.TaggedError<Unauthorized>()("Unauthorized", { detail: Schema.String }) {}
export class Forbidden extends Schema.TaggedError<Forbidden>()("Forbidden", { detail: Schema.String }) {}
export class NotFound extends Schema.TaggedError<NotFound>()("NotFound", { detail: Schema.String }) {}
/** A 429. The Retry-After header is set by the server middleware from `retryAfterSeconds`. */
export class TooManyRequests extends Schema.TaggedError<TooManyRequests>()("TooManyRequests", {
  detail: Schema.String,
  retryAfterSeconds: Schema.Number
}) {}

/**
 * A 503: the server is short of memory and starts no new run for now (health/Memory.ts). The
 * Retry-After header is set by the server middleware from `retryAfterSeconds`, as for a 429.
 */
export class Overloaded extends Schema.TaggedError<Overloaded>()("Overloaded", {
  detail: Schema.String,
  retryAfterSeconds: Schema.Number
}) {}

/**
 * The wire form of an error class: the body is `{detail}` only (no `_tag`), and decoding a response
 * of that status yields the class again, so the typed client gets real error values.
 */
const wire = <Self extends { readonly detail: unknown }, D>(
  cls: Schema.Schema<Self, any> & (new(props: any) => Self),
  detail: Schema.Schema<D, any>,
  status: number,
  description: string
) =>
  Schema.transform(Schema.Struct({ detail }), Schema.typeSchema(cls), {
    strict: false,
    decode: (body) => new cls({ detail: body.detail }),
    encode: (error) => ({ detail: error.detail as D })
  }).annotations(HttpApiSchema.annotations({ status, description }))

/**
 * A domain's error as the API sends it: the body is `{"detail": string}` (no `_tag`) at the status
 * the class declares with `HttpApiSchema.annotations({ status, description })`, and the typed
 * client decodes it back into the class. Declare the class with its domain; add `detailBody(Class)`
 * to the endpoints (or group) that can raise it.
 */
export const detailBody = <Self extends { readonly detail: string }>(
  cls: Schema.Schema<Self, any> & (new(props: { readonly detail: string }) => Self)
) => {
  const status = HttpApiSchema.getStatusError(cls)
  // A class's own annotations sit on its surrogate (the struct it was declared with).
  const declared = AST.getSurrogateAnnotation(cls.ast).pipe(Option.flatMap(AST.getDescriptionAnnotation))
  return wire(cls, Schema.String, status, Option.getOrElse(declared, () => String(cls.ast)))
}

const TooManyRequestsWire = Schema.transform(
  Schema.Struct({ detail: Schema.String }),
  Schema.typeSchema(TooManyRequests),
  {
    strict: true,
    decode: (body) => new TooManyRequests({ detail: body.detail, retryAfterSeconds: 0 }),
    encode: (error) => ({ detail: error.detail })
  }
).annotations(HttpApiSchema.annotations({ status: 429, description: "Rate limited; see the Retry-After header" }))

const OverloadedWire = Schema.transform(
  Schema.Struct({ detail: Schema.String }),
  Schema.typeSchema(Overloaded),
  {
    strict: true,
    decode: (body) => new Overloaded({ detail: body.detail, retryAfterSeconds: 0 }),
    encode: (error) => ({ detail: error.detail })
  }
).annotations(HttpApiSchema.annotations({ status: 503, description: "Short of memory: no new run now; see the Retry-After header" }))

/** The wire schemas, for endpoints and middleware that name the errors they raise. */
export const ErrorResponses = {
  validation: wire(ValidationError, Schema.Array(ValidationIssue), 422, "Validation error"),
  unauthorized: wire(Unauthorized, Schema.String, 401, "Missing or invalid credentials"),
  forbidden: wire(Forbidden, Schema.String, 403, "The credentials lack the required scope"),
  notFound: wire(NotFound, Schema.String, 404, "Not found"),
  tooManyRequests: TooManyRequestsWire,
  overloaded: OverloadedWire
}

/** A 429's or a 503's Retry-After value: whole seconds, at least one. */
export const retryAfterHeader = (seconds: number) => String(Math.max(1, Math.ceil(seconds)))

/** What a 500 says: never the cause, which is logged instead. */
export const internalErrorBody = { detail: "Internal server error" } as const
