/**
 * Secret-like input detection: names the kinds of credentials a message appears to contain (for
 * the `secret_warning` event), never the values. Pure and synchronous.
 *
 * Precision over recall: each pattern is anchored on a vendor prefix or on an assignment to a
 * credential-named variable, and the free-form ones also require the value to look random (letters
 * and digits mixed, no placeholder), so ordinary prose that merely talks about passwords or keys
 * does not trip it. Every regex is linear (no nested quantifiers), so long inputs stay cheap.
 */

export type SecretPatternType =
  | "private_key"
  | "anthropic_api_key"
  | "openai_api_key"
  | "aws_access_key_id"
  | "aws_secret_access_key"
  | "github_token"
  | "gitlab_token"
  | "slack_token"
  | "slack_webhook_url"
  | "stripe_secret_key"
  | "google_api_key"
  | "cairn_scoped_key"
  | "jwt"
  | "bearer_token"
  | "password_assignment"
  | "url_credentials"
  | "generic_api_key"

interface Pattern {
  readonly type: SecretPatternType
  readonly regex: RegExp
  /** The capture groups that may hold the secret value, first defined wins (none: the whole match). */
  readonly groups?: ReadonlyArray<number>
  /** Extra check on the value; the match counts only when it passes. */
  readonly accept?: (value: string, match: RegExpExecArray) => boolean
}

const hasLetter = /[A-Za-z]/
const hasDigit = /\d/

/** Letters and digits mixed: what generated tokens look like and words do not. */
const looksRandom = (value: string): boolean => hasLetter.test(value) && hasDigit.test(value)

/** Values that document a credential rather than hold one: `***`, `<token>`, `${VAR}`, `xxxx`, `changeme`. */
const placeholder =
  /^(?:[*x.#•-]+|<[^>]*>|\$\{[^}]*\}|\$[A-Z_][A-Z0-9_]*|%[^%]+%|\{\{[^}]*\}\}|(?:your|my|the)[-_]?\w*|changeme|example\w*|redacted|null|none|undefined|true|false|password|secret|\.\.\.)$/i

const notPlaceholder = (value: string): boolean => !placeholder.test(value)

/** A value with surrounding brackets and sentence punctuation removed: "(required)." is "required". */
const bare = (value: string) => value.replace(/^[([{<]+/, "").replace(/[)\]}>.,!?:]+$/, "")

/**
 * A password value: anything but a placeholder when assigned with `=` or quoted (config, JSON,
 * YAML); after a bare `:` only when it holds a digit or a symbol, so "Password: required" is not one.
 */
const passwordValue = (value: string, match: RegExpExecArray): boolean => {
  const core = bare(value)
  if (core.length < 4 || !notPlaceholder(core)) return false
  const assignedOrQuoted = match[1] === "=" || match[2] !== undefined || match[3] !== undefined
  return assignedOrQuoted || hasDigit.test(core) || /[^A-Za-z]/.test(core)
}

/**
 * Vendor-specific patterns come first: a value they match is not reported again by the generic
 * patterns below them (an `api_key=sk-...` line is an OpenAI key, not also a generic one).
 */
const specific: ReadonlyArray<Pattern> = [
  { type: "private_key", regex: /-----BEGIN (?:[A-Z0-9]+ ){0,3}PRIVATE KEY(?: BLOCK)?-----/g },
  { type: "anthropic_api_key", regex: /\bsk-ant-[A-Za-z0-9_-]{32,}/g },
  {
    type: "openai_api_key",
    regex: /\bsk-(?!ant-)(?:proj-|svcacct-|admin-|None-)?[A-Za-z0-9_-]{32,}/g,
    accept: looksRandom
  },
  { type: "aws_access_key_id", regex: /\b(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|ANPA)[A-Z0-9]{16}\b/g, accept: looksRandom },
  {
    type: "aws_secret_access_key",
    regex: /\baws_?secret_?access_?key\b["']?\s*[:=]\s*["']?([A-Za-z0-9/+]{40})(?![A-Za-z0-9/+])/gi,
    groups: [1],
    accept: looksRandom
  },
  { type: "github_token", regex: /\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{50,})/g },
  { type: "gitlab_token", regex: /\bglpat-[A-Za-z0-9_-]{20,}/g },
  { type: "slack_token", regex: /\bxox[abposr]-[A-Za-z0-9-]{10,}/g, accept: looksRandom },
  { type: "slack_webhook_url", regex: /https:\/\/hooks\.slack\.com\/services\/T[A-Z0-9]+\/B[A-Z0-9]+\/[A-Za-z0-9]{16,}/g },
  { type: "stripe_secret_key", regex: /\b[sr]k_(?:live|test)_[A-Za-z0-9]{20,}/g },
  { type: "google_api_key", regex: /\bAIza[A-Za-z0-9_-]{35}(?![A-Za-z0-9_-])/g },
  { type: "cairn_scoped_key", regex: /\bask_[A-Za-z0-9_-]{32,}/g, accept: looksRandom },
  { type: "jwt", regex: /\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{16,}/g }
]

const generic: ReadonlyArray<Pattern> = [
  {
    type: "bearer_token",
    regex: /\bBearer\s+([A-Za-z0-9._~+/-]{20,}=*)/g,
    groups: [1],
    accept: (value) => looksRandom(value) && notPlaceholder(value)
  },
  {
    type: "password_assignment",
    regex: /(?<![A-Za-z0-9])(?:password|passwd|pwd|passphrase)\b["']?\s*(=|:)\s*(?:"([^"\s]{4,})"|'([^'\s]{4,})'|([^\s"',;]{4,}))/gi,
    groups: [2, 3, 4],
    accept: passwordValue
  },
  {
    type: "password_assignment",
    regex: /\b(?:my|the)\s+(?:\w+\s+)?password\s+is\s*:?\s+["']?([^\s"']{6,})/gi,
    groups: [1],
    accept: (value) => notPlaceholder(value) && hasDigit.test(value)
  },
  {
    // scheme://user:password@host: connection strings and URLs with credentials in them.
    type: "url_credentials",
    regex: /\b[a-z][a-z0-9+.-]{1,20}:\/\/[^\s:/@]{1,100}:([^\s:/@]{3,200})@[^\s/@]+/gi,
    groups: [1],
    accept: (value) => notPlaceholder(value)
  },
  {
    type: "generic_api_key",
    regex:
      /(?<![A-Za-z0-9])(?:api[_-]?key|apikey|api[_-]?token|access[_-]?token|auth[_-]?token|secret[_-]?key|client[_-]?secret|private[_-]?token|app[_-]?secret)\b["']?\s*[:=]\s*["']?([A-Za-z0-9_\-./+=]{16,})/gi,
    groups: [1],
    accept: (value) => looksRandom(value) && notPlaceholder(value)
  }
]

interface Span {
  readonly start: number
  readonly end: number
}

const overlaps = (spans: ReadonlyArray<Span>, span: Span) => spans.some((s) => s.start < span.end && span.start < s.end)

/** The value a match holds (the first of its value groups that matched) and where it is. */
const valueOf = (match: RegExpExecArray, groups: ReadonlyArray<number> | undefined): { value: string; span: Span } | undefined => {
  const value = groups === undefined ? match[0] : groups.map((g) => match[g]).find((v) => v !== undefined)
  if (value === undefined) return undefined
  const start = match.index + match[0].lastIndexOf(value)
  return { value, span: { start, end: start + value.length } }
}

/** Input longer than this is only scanned up to here: detection stays bounded in time. */
export const maxScannedLength = 200_000

/** Every secret-like value in `text` (the scanned part), with its type and where it is. */
const findSecrets = (input: string): ReadonlyArray<{ readonly type: SecretPatternType; readonly span: Span }> => {
  const found: Array<{ type: SecretPatternType; span: Span }> = []
  const claimed: Array<Span> = []
  const scan = (patterns: ReadonlyArray<Pattern>, skipClaimed: boolean) => {
    for (const pattern of patterns) {
      pattern.regex.lastIndex = 0
      for (let match = pattern.regex.exec(input); match !== null; match = pattern.regex.exec(input)) {
        const hit = valueOf(match, pattern.groups)
        if (hit === undefined) continue
        if (pattern.accept && !pattern.accept(hit.value, match)) continue
        if (skipClaimed && overlaps(claimed, hit.span)) continue
        claimed.push(hit.span)
        found.push({ type: pattern.type, span: hit.span })
      }
    }
  }
  scan(specific, false)
  scan(generic, true)
  return found
}

const scanned = (text: string) => (text.length > maxScannedLength ? text.slice(0, maxScannedLength) : text)

/**
 * The pattern types found in `text`, each once, in a fixed order (vendor-specific first). The
 * matched values never leave this function.
 */
export const detectSecrets = (text: string): ReadonlyArray<SecretPatternType> => [
  ...new Set(findSecrets(scanned(text)).map((hit) => hit.type))
]

/** `text` with every secret-like value replaced by `****` (for audit logs; the rest stays readable). */
export const redactSecrets = (text: string): string => {
  const hits = [...findSecrets(scanned(text))].sort((a, b) => b.span.start - a.span.start)
  let out = text
  for (const { span } of hits) out = out.slice(0, span.start) + "****" + out.slice(span.end)
  return out
}

/** Argument names whose values are credentials whatever they look like. */
const secretName = /pass(?:word|wd|phrase)?$|secret|token|api[_-]?key|apikey|authorization|credential|private[_-]?key|cookie/i

/** A string longer than this is cut in an audit: the rest is not kept (nor left unscanned). */
export const auditedLength = 2_000

const masked = (value: unknown): unknown =>
  value === null || value === undefined
    ? value
    : Array.isArray(value)
    ? value.map(masked)
    : typeof value === "object"
    ? Object.fromEntries(Object.keys(value).map((key) => [key, "****"]))
    : "****"

/** Text as an audit keeps it: secret-like values redacted, cut to `auditedLength`. */
export const auditedText = (text: string): string => {
  const clean = redactSecrets(text.length > auditedLength ? text.slice(0, auditedLength) : text)
  return text.length > auditedLength ? `${clean}… [${text.length} characters]` : clean
}

/**
 * A tool call's arguments as an audit log may keep them: everything under a credential-like name
 * masked (a nested object's values too), secret-like values anywhere else redacted, long strings cut.
 */
export const maskArguments = (value: unknown): unknown => {
  if (typeof value === "string") return auditedText(value)
  if (Array.isArray(value)) return value.map(maskArguments)
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(
      Object.entries(value).map(([key, inner]) => [key, secretName.test(key) ? masked(inner) : maskArguments(inner)])
    )
  }
  return value
}
