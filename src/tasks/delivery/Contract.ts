/**
 * Registration-time check of the dispatcher contract. The spec says a dispatcher whose operations
 * lack `extra_metadata` fails with a runtime type error when called; here that mistake is caught
 * when the dispatcher is registered, so it never surfaces as a lost delivery. What is checked:
 *
 * - `deliver` and `postMessage` are functions;
 * - `deliver.length >= 4`: it declares (task, result, clientActions, extraMetadata). A JS function's
 *   `length` counts the parameters before the first default or rest parameter, so declare
 *   `extraMetadata` as a plain parameter; `(...args)` does not pass;
 * - `postMessage.length >= 3`: it declares (dispatchConfig, text, options);
 * - the third parameter of `postMessage`, read from the function's source: a plain name (the whole
 *   options object is received, as Python's `**kwargs`) passes; an object pattern passes only when
 *   it names `extraMetadata` or has a `...rest` element, since otherwise `extraMetadata` is dropped.
 */
import { type Dispatcher, DispatcherContractError } from "../../sdk/Dispatcher.ts"

/** Any function: only its source text and its declared parameter count are read. */
type AnyFunction = (...args: ReadonlyArray<never>) => unknown

/** The source text of a function's parameter list, or undefined when it cannot be found. */
const parameterList = (fn: AnyFunction): string | undefined => {
  const source = Function.prototype.toString.call(fn)
  const open = source.indexOf("(")
  const arrow = source.indexOf("=>")
  // `x => ...`: a single bare parameter.
  if (arrow >= 0 && (open < 0 || arrow < open)) return source.slice(0, arrow).replace(/^async\s+/, "").trim()
  if (open < 0) return undefined
  let depth = 0
  let quote: string | null = null
  for (let i = open; i < source.length; i++) {
    const c = source[i]!
    if (quote) {
      if (c === "\\") i++
      else if (c === quote) quote = null
      continue
    }
    if (c === "\"" || c === "'" || c === "`") quote = c
    else if (c === "(" || c === "{" || c === "[") depth++
    else if (c === ")" || c === "}" || c === "]") {
      depth--
      if (depth === 0) return source.slice(open + 1, i)
    }
  }
  return undefined
}

/** Splits on commas at nesting depth 0. */
const topLevel = (text: string, separator: string): Array<string> => {
  const parts: Array<string> = []
  let depth = 0
  let start = 0
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!
    if (c === "(" || c === "{" || c === "[") depth++
    else if (c === ")" || c === "}" || c === "]") depth--
    else if (c === separator && depth === 0) {
      parts.push(text.slice(start, i))
      start = i + 1
    }
  }
  parts.push(text.slice(start))
  return parts.map((part) => part.trim()).filter((part) => part.length > 0)
}

/** Whether an options parameter as written lets `extraMetadata` through. */
export const optionsReceiveExtraMetadata = (parameter: string): boolean => {
  const pattern = topLevel(parameter, "=")[0] ?? parameter
  if (!pattern.startsWith("{")) return /^[A-Za-z_$][\w$]*(\s*:.*)?$/s.test(pattern)
  const inner = pattern.slice(1, pattern.lastIndexOf("}"))
  return topLevel(inner, ",").some((entry) => entry.startsWith("...") || /^extraMetadata\b/.test(entry))
}

export const checkDispatcher = (type: string, dispatcher: unknown): Dispatcher => {
  const fail = (message: string): never => {
    throw new DispatcherContractError({ message: `Dispatcher "${type}" rejected: ${message}` })
  }
  if (!/^[a-z0-9_][a-z0-9_.-]*$/i.test(type)) fail("the dispatch type must be a non-empty name of letters, digits, _ . -")
  const candidate = dispatcher as Partial<Dispatcher> | null
  if (!candidate || typeof candidate !== "object") return fail("expected an object with deliver and postMessage")
  if (typeof candidate.deliver !== "function") fail("deliver is not a function")
  if (typeof candidate.postMessage !== "function") fail("postMessage is not a function")
  const deliver = candidate.deliver as AnyFunction
  const postMessage = candidate.postMessage as AnyFunction
  if (deliver.length < 4) {
    fail(
      `deliver must accept (task, result, clientActions, extraMetadata); it declares ${deliver.length} parameter(s), so extraMetadata would be lost`
    )
  }
  if (postMessage.length < 3) {
    fail(`postMessage must accept (dispatchConfig, text, options); it declares ${postMessage.length} parameter(s)`)
  }
  const list = parameterList(postMessage)
  const options = list === undefined ? undefined : topLevel(list, ",")[2]
  if (options === undefined) fail("the parameters of postMessage could not be read from its source")
  if (!optionsReceiveExtraMetadata(options!)) {
    fail(`postMessage's options parameter (${options}) does not take extraMetadata; name it in the pattern or take the whole object`)
  }
  return candidate as Dispatcher
}
