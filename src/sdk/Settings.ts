/**
 * An integration's settings, declared once in its SETUP: each `env_vars` entry names the key, whether
 * it is required, its default (the text an unset value falls back to) and a `schema` from that text
 * to the value the integration uses. The server checks every value an admin saves against the
 * schema (a wrong one is refused with 422, nothing stored); the integration reads typed values with
 * `readSettings`, which also says which required ones are missing. No integration restates a
 * default or a required check.
 */
import { Either, Option, ParseResult, Schema } from "effect"

export interface EnvVarSpec<A = any> {
  readonly key: string
  readonly required?: boolean
  readonly secret?: boolean
  readonly description?: string
  /** The text an unset value falls back to; it goes through `schema` like any other. */
  readonly default?: string
  /** From the setting's text to its value; none: the text itself (a `type` other than string still checks it). */
  readonly schema?: Schema.Schema<A, string>
  /** The settings form's label; default: the key. */
  readonly label?: string
  /** The form's control: a password field, a number, a checkbox, a choice of `choices`, a URL, a comma-separated list. */
  readonly type?: SettingKind
  /** The values an `enum` setting may take. */
  readonly choices?: ReadonlyArray<string>
  /** The form's section it shows in ("Connection", "Polling"); default: the first. */
  readonly group?: string
  /** Folded away in the form until asked for. */
  readonly advanced?: boolean
}

/** The kinds of control a settings form draws. */
export const settingKinds = ["string", "secret", "number", "boolean", "enum", "url", "list"] as const
export type SettingKind = (typeof settingKinds)[number]

type ValueOf<V> = V extends { readonly schema: Schema.Schema<infer A, string> } ? A : string
type AlwaysSet<V> = V extends { readonly required: true } ? true : V extends { readonly default: string } ? true : false

/** The values of a SETUP's settings: a required or defaulted one is always there. */
export type SettingsValues<Vars extends ReadonlyArray<EnvVarSpec>> = {
  readonly [V in Vars[number] as V["key"]]: AlwaysSet<V> extends true ? ValueOf<V> : ValueOf<V> | undefined
}

export type SettingsRead<Vars extends ReadonlyArray<EnvVarSpec>> =
  | { readonly ok: true; readonly values: SettingsValues<Vars> }
  | { readonly ok: false; readonly error: string }

/** The value `text` stands for, or why it is not one (naming the setting); without a schema, the text. */
const decodeSetting = (spec: Pick<EnvVarSpec, "key" | "secret" | "schema">, text: string): Either.Either<unknown, string> => {
  if (!spec.schema) return Either.right(text)
  return Either.mapLeft(Schema.decodeUnknownEither(spec.schema)(text), (error) => {
    // A parse message may quote the value: a secret's is never repeated.
    if (spec.secret) return `${spec.key}: not a valid value`
    const issue = ParseResult.ArrayFormatter.formatErrorSync(error)[0]
    return `${spec.key}: ${issue?.message ?? error.message}`
  })
}

/** Why `text` is not a valid value of `spec`, or undefined when it is. */
export const settingProblem = (spec: Pick<EnvVarSpec, "key" | "secret" | "schema">, text: string): string | undefined =>
  Either.getLeft(decodeSetting(spec, text)).pipe(Option.getOrUndefined)

const joinKeys = (keys: ReadonlyArray<string>) =>
  keys.length === 1 ? `${keys[0]} is not set` : `${keys.slice(0, -1).join(", ")} and ${keys.at(-1)} are not set`

/**
 * Decodes resolved settings (as `cairn.settings.all()` or a worker's `settings` give them: stored,
 * then environment, then default) into typed values, or says what is missing or wrong.
 */
export const readSettings = <const Vars extends ReadonlyArray<EnvVarSpec>>(
  setup: { readonly env_vars?: Vars },
  resolved: Readonly<Record<string, string | undefined>>
): SettingsRead<Vars> => {
  const specs = setup.env_vars ?? []
  const missing = specs.filter((spec) => spec.required && !resolved[spec.key]?.trim()).map((spec) => spec.key)
  if (missing.length > 0) return { ok: false, error: joinKeys(missing) }
  const values: Record<string, unknown> = {}
  for (const spec of specs) {
    const text = resolved[spec.key] ?? spec.default
    if (text === undefined || text === "") continue
    const decoded = decodeSetting(spec, text)
    if (Either.isLeft(decoded)) return { ok: false, error: decoded.left }
    values[spec.key] = decoded.right
  }
  return { ok: true, values: values as SettingsValues<Vars> }
}

/** The kinds of setting integrations use, each from the text an env file or a form holds. */
export const SettingType = {
  /** A whole number within bounds ("993"). */
  integer: ({ min, max }: { readonly min?: number; readonly max?: number } = {}) =>
    Schema.compose(Schema.Trim, Schema.NumberFromString).pipe(
      Schema.int({ message: () => "Expected a whole number" }),
      Schema.between(min ?? Number.MIN_SAFE_INTEGER, max ?? Number.MAX_SAFE_INTEGER, {
        message: () =>
          min !== undefined && max !== undefined
            ? `Expected a whole number from ${min} to ${max}`
            : min !== undefined
            ? `Expected a whole number of at least ${min}`
            : `Expected a whole number of at most ${max}`
      })
    ),
  /** A number above zero ("2.5"). */
  positive: Schema.compose(Schema.Trim, Schema.NumberFromString).pipe(Schema.positive({ message: () => "Expected a number above 0" })),
  /** true or false, in any case. */
  boolean: Schema.compose(Schema.Trim, Schema.Lowercase).pipe(
    Schema.filter((text) => text === "true" || text === "false", { message: () => "Expected true or false" }),
    Schema.compose(Schema.BooleanFromString)
  ),
  /** One of a few words, in any case ("TLS" is "tls"). */
  choice: <const Choices extends ReadonlyArray<string>>(...choices: Choices) =>
    Schema.compose(Schema.Trim, Schema.Lowercase).pipe(
      Schema.filter((text): text is Choices[number] => choices.includes(text), {
        message: () => `Expected one of ${choices.join(", ")}`
      })
    ),
  /** A comma-separated list; blank entries are dropped ("INBOX, Work"). */
  list: Schema.transform(Schema.String, Schema.Array(Schema.String), {
    strict: true,
    decode: (text) => text.split(",").map((entry) => entry.trim()).filter((entry) => entry.length > 0),
    encode: (entries) => entries.join(", ")
  }),
  /** An http(s) address, without a trailing slash. */
  url: Schema.Trim.pipe(
    Schema.filter((text) => URL.canParse(text) && /^https?:$/.test(new URL(text).protocol), {
      message: () => "Expected an http:// or https:// address"
    }),
    Schema.transform(Schema.String, { strict: true, decode: (text) => text.replace(/\/+$/, ""), encode: (text) => text })
  ),
  /** Text with its surrounding blanks removed. */
  text: Schema.Trim
} as const
