/**
 * The edge every request passes before its route decodes it, so bad input is refused once, here,
 * in the spec's shape, and never reaches a handler or the database:
 * - a path or query holding NUL (`%00`) or a path that does not decode: 422;
 * - a body larger than its route's limit (REQUEST_MAX_BYTES, or the `BodyLimit` the endpoint
 *   declares): 413 from Content-Length before a byte is read, or as soon as a body without one
 *   passes the limit (the connection is then closed, the rest unread);
 * - a JSON route sent another content type: 415; a multipart body without a boundary: 422;
 * - a JSON body nesting too deep, or holding NUL or a lone surrogate: 422 (see `JsonText.ts`).
 * Bodies are still read lazily, by the handler, after authentication: the request a handler sees
 * reads its body through the limit and the JSON checks instead of the platform's unbounded reader.
 */
import {
  FileSystem,
  HttpApi,
  HttpApiBuilder,
  HttpIncomingMessage,
  HttpMethod,
  HttpServerError,
  HttpServerRequest,
  HttpServerResponse,
  UrlParams
} from "@effect/platform"
import { NodeHttpServerRequest } from "@effect/platform-node"
import { Context, Data, Deferred, Effect, FiberId, Option } from "effect"
import type { IncomingMessage } from "node:http"
import { AppConfig } from "../config/AppConfig.ts"
import { BodyLimit, type BodyLimitKind } from "../contract/BodyLimit.ts"
import { RequestMaxBytes, UploadMaxBytes } from "../settings/Model.ts"
import { Settings } from "../settings/Settings.ts"
import { inspectJsonText, jsonTextMessage } from "./JsonText.ts"

/**
 * Why the edge refused a request: its status and `{detail}` body. Answered here when the request
 * itself shows it, and by the error mapping (`Server.ts`) when a body reader finds it.
 */
export class RequestRefused extends Data.TaggedError("RequestRefused")<{
  readonly status: 413 | 415 | 422
  readonly body: unknown
}> {}

/** The answer to a refusal; a 413 closes the connection, so the rest of the body stays unread. */
export const refusalResponse = (refused: RequestRefused) =>
  HttpServerResponse.unsafeJson(refused.body, { status: refused.status, headers: refused.status === 413 ? { connection: "close" } : {} })

const unprocessable = (loc: ReadonlyArray<string>, msg: string) =>
  new RequestRefused({ status: 422, body: { detail: [{ loc, msg, type: "value_error" }] } })

const tooLarge = (limit: number, setting: string) =>
  new RequestRefused({ status: 413, body: { detail: `The request body is larger than ${limit} bytes (${setting})` } })

/** Room in a files body for what is not the file: base64's third more, boundaries, other fields. */
const filesBodyLimit = (uploadMaxBytes: number) => Math.ceil((uploadMaxBytes * 4) / 3) + 64 * 1024

interface RouteEntry {
  readonly method: string
  readonly pattern: RegExp
  readonly limit: BodyLimitKind | undefined
  /** The route's body is JSON only (a schema payload): any other declared type is a 415. */
  readonly jsonOnly: boolean
}

const patternOf = (path: string) =>
  new RegExp(
    "^" +
      path
        .split("/")
        .map((part) => (part === "*" ? ".*" : part.startsWith(":") ? "[^/]+" : part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")))
        .join("/") +
      "/?$"
  )

/** Every endpoint of the API with what the guard needs to know of it. */
const routesOf = (api: HttpApi.HttpApi.Any): ReadonlyArray<RouteEntry> => {
  const routes: Array<RouteEntry> = []
  HttpApi.reflect(api as any, {
    onGroup: () => {},
    onEndpoint: ({ endpoint, mergedAnnotations, payloads }) => {
      const types = [...payloads.keys()]
      routes.push({
        method: endpoint.method,
        pattern: patternOf(endpoint.path),
        limit: Context.getOption(mergedAnnotations, BodyLimit).pipe(Option.getOrUndefined),
        jsonOnly: types.length > 0 && types.every((type) => type === "application/json")
      })
    }
  })
  return routes
}

/** A URL part decoded, or undefined when its percent-encoding is broken. */
const decoded = (text: string): string | undefined => {
  try {
    return decodeURIComponent(text)
  } catch {
    return undefined
  }
}

/** The problem with a request's URL (a 422), or undefined. */
const urlProblem = (url: string) => {
  const mark = url.indexOf("?")
  const path = mark === -1 ? url : url.slice(0, mark)
  const query = mark === -1 ? "" : url.slice(mark + 1)
  const pathText = decoded(path)
  if (pathText === undefined) return unprocessable(["path"], "The path's percent-encoding is not valid UTF-8")
  if (pathText.includes("\u0000")) return unprocessable(["path"], "The path holds a NUL character")
  if (/%00/i.test(query)) return unprocessable(["query"], "The query holds a NUL character")
  return undefined
}

const isJsonType = (contentType: string) => contentType === "" || /^application\/([\w.+-]*\+)?json\b/.test(contentType)

/** Reads the whole body up to `limit` bytes; past it, stops reading (the rest stays unread) and fails. */
const readWithin = (source: IncomingMessage, limit: number, setting: string) =>
  Effect.async<Buffer, RequestRefused | Error>((resume) => {
    const chunks: Array<Buffer> = []
    let size = 0
    const stop = () => {
      source.off("data", onData)
      source.off("end", onEnd)
      source.off("error", onError)
    }
    const onData = (chunk: Buffer) => {
      size += chunk.length
      if (size > limit) {
        stop()
        source.pause()
        resume(Effect.fail(tooLarge(limit, setting)))
      } else chunks.push(chunk)
    }
    const onEnd = () => {
      stop()
      // One chunk is the body as read (no copy). A small copy would come from Node's shared 8 KB
      // pool, and the request keeps its body for its whole life: an open stream would pin a slab.
      resume(Effect.succeed(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks)))
    }
    const onError = (error: Error) => {
      stop()
      resume(Effect.fail(error))
    }
    source.on("data", onData)
    source.once("end", onEnd)
    source.once("error", onError)
    return Effect.sync(stop)
  })

/**
 * Bounds the request's body readers by `limit` and, for JSON, the text checks. Failures are the
 * platform's `RequestError` (what its readers fail with) whose cause is the `RequestRefused` to
 * answer. The readers are set on the request itself (shadowing its class's getters), so the
 * handler's context stays the one the platform made: giving a wrapped request instead would copy
 * that whole context (70-odd services) and write a fiber ref twice, on every request with a body.
 */
const guardBody = (request: HttpServerRequest.HttpServerRequest, limit: number, setting: string, json: boolean) => {
  const fail = (cause: unknown) => new HttpServerError.RequestError({ request, reason: "Decode", cause })
  const memo = <A>(effect: Effect.Effect<A, HttpServerError.RequestError>) => {
    // Read once, whoever asks first; the others wait for that read. (Effect.cached would do the
    // same but needs a fiber run to make, two a request.)
    const done = Deferred.unsafeMake<A, HttpServerError.RequestError>(FiberId.none)
    let started = false
    return Effect.suspend(() => {
      if (started) return Deferred.await(done)
      started = true
      return Effect.zipRight(Effect.intoDeferred(effect, done), Deferred.await(done))
    })
  }
  const bytes = memo(
    Effect.mapError(Effect.suspend(() => readWithin(NodeHttpServerRequest.toIncomingMessage(request), limit, setting)), fail)
  )
  const text = memo(
    Effect.flatMap(bytes, (buffer) => {
      const text = buffer.toString("utf8")
      const problem = json ? inspectJsonText(text) : undefined
      return problem ? Effect.fail(fail(unprocessable(["body"], jsonTextMessage(problem)))) : Effect.succeed(text)
    })
  )
  const parsed = Effect.flatMap(text, (body) => Effect.try({ try: () => (body === "" ? null : JSON.parse(body)), catch: fail }))
  const arrayBuffer = Effect.map(
    bytes,
    (buffer) => buffer.buffer.slice(buffer.byteOffset, buffer.byteOffset + buffer.byteLength) as ArrayBuffer
  )
  Object.defineProperties(request, {
    text: { value: text },
    json: { value: parsed },
    arrayBuffer: { value: arrayBuffer },
    urlParamsBody: {
      get: () => Effect.flatMap(text, (body) => Effect.try({ try: () => UrlParams.fromInput(new URLSearchParams(body)), catch: fail }))
    }
  })
}

/** The guard, as the API's outermost middleware (it sees every request before its route). */
export const requestGuard = HttpApiBuilder.middleware(
  Effect.gen(function*() {
    const { api } = yield* HttpApi.Api
    const settings = yield* Settings
    const config = yield* AppConfig
    const routes = routesOf(api)
    const find = (method: string, path: string) => routes.find((route) => route.method === method && route.pattern.test(path))

    const limitOf = (kind: BodyLimitKind | undefined) =>
      kind === "audio"
        ? Effect.succeed({ bytes: config.transcribeMaxBytes, setting: "TRANSCRIBE_MAX_BYTES" })
        : kind === "files"
        ? Effect.map(settings.get(UploadMaxBytes), (bytes) => ({ bytes: filesBodyLimit(bytes), setting: "UPLOAD_MAX_BYTES" }))
        : Effect.map(settings.get(RequestMaxBytes), (bytes) => ({ bytes, setting: "REQUEST_MAX_BYTES" }))

    return (app) =>
      Effect.gen(function*() {
        const request = yield* HttpServerRequest.HttpServerRequest
        const refusedUrl = urlProblem(request.url)
        if (refusedUrl) return refusalResponse(refusedUrl)
        if (!HttpMethod.hasBody(request.method)) return yield* app
        const route = find(request.method, request.url.split("?", 1)[0]!)
        if (!route) return yield* app

        const limit = yield* limitOf(route.limit)
        const declared = Number(request.headers["content-length"] ?? "")
        if (Number.isFinite(declared) && declared > limit.bytes) return refusalResponse(tooLarge(limit.bytes, limit.setting))
        const contentType = (request.headers["content-type"] ?? "").toLowerCase().trim()
        const hasBody = declared > 0 || request.headers["transfer-encoding"] !== undefined
        if (contentType.startsWith("multipart/") && !/;\s*boundary=/.test(contentType)) {
          return refusalResponse(unprocessable(["header", "content-type"], "A multipart body needs a boundary in its Content-Type"))
        }
        if (route.jsonOnly && hasBody && !isJsonType(contentType)) {
          return refusalResponse(
            new RequestRefused({
              status: 415,
              body: { detail: `Unsupported Content-Type ${contentType}: this route takes application/json` }
            })
          )
        }
        guardBody(request, limit.bytes, limit.setting, isJsonType(contentType))
        // The platform's multipart parser reads its limit from the context (one copy of it, for
        // an upload only).
        if (!contentType.startsWith("multipart/")) return yield* app
        return yield* Effect.provideService(app, HttpIncomingMessage.MaxBodySize, Option.some(FileSystem.Size(limit.bytes)))
      })
  })
)
