/**
 * Routes answered before the HttpApi router, for hot paths where the router, middleware and
 * response encoding cost more than the work itself (the completion proxy: bench/llmProxy.ts). A
 * fast route is still declared in the HttpApi, which stays the contract (OpenAPI, discover, scope
 * catalogue); this is only a cheaper way in, and it must answer exactly as the declared route
 * would (`test/providers/fastRoute.test.ts` compares the two).
 *
 * The server gives a request to a fast route only when nothing else would have touched it: no
 * tracing, no request log, no `Origin` header (CORS answers stay with the CORS middleware). A route
 * may decline a request it does not handle cheaply (an unusual content type, a large body), and the
 * router gets it.
 */
import { Cause, Context, Effect, Either, type ParseResult, Runtime } from "effect"
import type { IncomingMessage, ServerResponse } from "node:http"
import { HttpApiDecodeError } from "@effect/platform/HttpApiError"
import { toValidationError } from "./DecodeErrors.ts"
import { declaredErrorAnswer, internalErrorBody, ValidationError } from "./Errors.ts"
import { readText } from "./ReadText.ts"

export interface FastRoute {
  readonly method: string
  readonly path: string
  /** True when it took the request; false leaves it to the router (nothing may be written then). */
  readonly handle: (request: IncomingMessage, response: ServerResponse) => boolean
}

export class FastRoutes extends Context.Tag("cairn/FastRoutes")<FastRoutes, ReadonlyArray<FastRoute>>() {}

/** Requests each fast route took in this process, by path (diagnostics; the tests check it). */
export const fastRouteCounts = new Map<string, number>()

/** The largest body a fast route reads itself; larger ones go through the router. */
export const fastBodyLimit = 256 * 1024

const sendJson = (response: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
  if (response.headersSent || response.destroyed) return
  const payload = Buffer.from(JSON.stringify(body))
  response.writeHead(status, { ...headers, "content-type": "application/json", "content-length": String(payload.length) })
  response.end(payload)
}

/**
 * A JSON POST route: reads the body (declining anything the router would parse otherwise),
 * decodes it with the endpoint's own payload schema, runs `handle` on the given runtime and writes
 * the encoded answer or the error. A client that goes away interrupts the work.
 */
export const jsonRoute = <P, A, Auth, R>(options: {
  readonly path: string
  readonly runtime: Runtime.Runtime<R>
  /** Runs first, as the auth middleware does before the body is decoded. */
  readonly authorize: (request: IncomingMessage) => Effect.Effect<Auth, unknown, R>
  /** The endpoint's payload schema, decoding. */
  readonly decode: (input: unknown) => Either.Either<P, ParseResult.ParseError>
  readonly handle: (payload: P, authorized: Auth) => Effect.Effect<A, unknown, R>
  /** The endpoint's success schema, encoding. */
  readonly encode: (value: A) => Either.Either<unknown, ParseResult.ParseError>
}): FastRoute => {
  const runFork = Runtime.runFork(options.runtime)
  return {
    method: "POST",
    path: options.path,
    handle: (request, response) => {
      const type = request.headers["content-type"]
      if (type !== undefined && !type.toLowerCase().includes("application/json")) return false
      const length = Number(request.headers["content-length"])
      if (!Number.isFinite(length) || length > fastBodyLimit) return false

      const program = Effect.flatMap(Effect.suspend(() => options.authorize(request)), (authorized) =>
        Effect.flatMap(readBody(request), (text) => {
          let parsed: unknown
          try {
            parsed = text === "" ? null : JSON.parse(text)
          } catch {
            return Effect.fail(ValidationError.single(["body"], "Request body is not valid JSON", "json_invalid"))
          }
          const decoded = options.decode(parsed)
          if (Either.isLeft(decoded)) {
            return Effect.flatMap(HttpApiDecodeError.fromParseError(decoded.left), (error) => Effect.fail(toValidationError(error)))
          }
          // An answer that does not fit its own schema is our defect: a 500. (The router re-fails it
          // as a decode error, a 422; the proxy's answers are sanitised so that neither happens.)
          return Effect.flatMap(options.handle(decoded.right, authorized), (value) => Effect.orDie(options.encode(value)))
        })
      ).pipe(
        Effect.matchCauseEffect({
          onSuccess: (body) => Effect.sync(() => sendJson(response, 200, body)),
          onFailure: (cause) => {
            if (Cause.isInterruptedOnly(cause)) return Effect.void
            const failure = Cause.failureOption(cause)
            const answer = failure._tag === "Some" ? declaredErrorAnswer(failure.value) : undefined
            if (answer) return Effect.sync(() => sendJson(response, answer.status, answer.body, answer.headers))
            return Effect.zipRight(
              Effect.logError("Unhandled error while serving a request", cause),
              Effect.sync(() => sendJson(response, 500, internalErrorBody))
            )
          }
        })
      )
      fastRouteCounts.set(options.path, (fastRouteCounts.get(options.path) ?? 0) + 1)
      const fiber = runFork(program)
      response.on("close", () => {
        if (!response.writableEnded) fiber.unsafeInterruptAsFork(fiber.id())
      })
      return true
    }
  }
}

const readBody = (request: IncomingMessage) =>
  Effect.async<string, ValidationError>((resume) =>
    readText(
      request,
      (text) => resume(Effect.succeed(text)),
      () => resume(Effect.fail(ValidationError.single(["body"], "Request body could not be read", "json_invalid")))
    )
  )
