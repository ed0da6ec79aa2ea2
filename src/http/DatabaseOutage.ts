/**
 * Whether a failure is the database being out of reach (refused, reset, timed out, shutting down,
 * out of connections) rather than a fault of the request or the code: the server then answers 503
 * with Retry-After, as a client or a balancer expects of a dependency that is down for a while.
 */

/** SQLSTATE classes and codes that say the connection, not the statement, failed. */
const unavailableSqlStates = new Set(["57P01", "57P02", "57P03", "53300", "53400"])
const unavailableErrnos = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "EPIPE",
  "ETIMEDOUT",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EHOSTUNREACH",
  "ENETUNREACH"
])
/** node-postgres and its pool say these without a code. */
const unavailableMessages = [
  /connection terminated/i,
  /timeout exceeded when trying to connect/i,
  /connection (?:is )?(?:closed|ended)/i,
  /client has encountered a connection error/i,
  /cannot use a pool after calling end/i
]

/** The seconds a client is asked to wait before it tries again. */
export const databaseRetryAfterSeconds = 5

/** Only a failure that went through the SQL client counts: an outbound HTTP call's reset is not the database's. */
export const isDatabaseUnavailable = (failure: unknown): boolean => {
  if ((failure as { _tag?: unknown } | undefined)?._tag !== "SqlError") return false
  for (let error = failure, depth = 0; error && typeof error === "object" && depth < 6; depth++) {
    const code = (error as { code?: unknown }).code
    if (typeof code === "string" && (unavailableErrnos.has(code) || unavailableSqlStates.has(code) || code.startsWith("08"))) {
      return true
    }
    const message = (error as { message?: unknown }).message
    if (typeof message === "string" && unavailableMessages.some((pattern) => pattern.test(message))) return true
    error = (error as { cause?: unknown }).cause
  }
  return false
}
