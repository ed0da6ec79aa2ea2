/**
 * A typed client for Cairn, derived from the same HttpApi definition the server serves:
 * `const cairn = yield* makeClient({ baseUrl, apiKey })` then `cairn.settings.list()`.
 *
 * The generated client reads a whole body before it answers, so a run's Server-Sent Events have
 * their own reader here: `makeStreamingClient` opens the chat stream or a rejoin (paths and payload
 * encoding taken from the same endpoint definitions) and decodes each event through the event
 * Schema as it arrives.
 */
import { Sse } from "@effect/experimental"
import { FetchHttpClient, HttpApiClient, HttpClient, HttpClientError, HttpClientRequest, HttpClientResponse } from "@effect/platform"
import { Data, Effect, Schema, Stream } from "effect"
import { AgentEvent, type SequencedEvent } from "./agent/Events.ts"
import { CairnApi } from "./Api.ts"
import { ChatRequest } from "./intake/Model.ts"
import { LogTailEvent, LogTailQuery } from "./logs/Model.ts"

export interface ClientOptions {
  readonly baseUrl: string
  readonly apiKey?: string
}

const withCredential = (options: ClientOptions) =>
  options.apiKey ? HttpClient.mapRequest(HttpClientRequest.bearerToken(options.apiKey)) : (client: HttpClient.HttpClient) => client

export const makeClient = (options: ClientOptions) =>
  HttpApiClient.make(CairnApi, { baseUrl: options.baseUrl, transformClient: withCredential(options) })

/** The client with the platform's fetch-based HTTP client already provided. */
export const makeFetchClient = (options: ClientOptions) => makeClient(options).pipe(Effect.provide(FetchHttpClient.layer))

export type CairnClient = Effect.Effect.Success<ReturnType<typeof makeClient>>
export { CairnApi }

/** A stream route answered with an error: its status and the spec's `{detail}`. */
export class StreamRefused extends Data.TaggedError("StreamRefused")<{ readonly status: number; readonly detail: string }> {
  override get message() {
    return `${this.status}: ${this.detail}`
  }
}

/** An event whose data is not one the event Schema knows (a newer server, or a damaged frame). */
export class UnreadableEvent extends Data.TaggedError("UnreadableEvent")<{ readonly data: string }> {}

const endpointOf = (group: "chat" | "runs" | "operations" | "logs", name: string) => CairnApi.groups[group]!.endpoints[name]!

const chatStream = endpointOf("chat", "stream")
const rejoinStream = endpointOf("runs", "rejoin")
const backupDownload = endpointOf("operations", "download")
const logStream = endpointOf("logs", "stream")
const encodeLogQuery = Schema.encode(LogTailQuery)
const decodeLogEvent = Schema.decode(Schema.parseJson(LogTailEvent))
const encodeChatRequest = Schema.encode(ChatRequest)
const decodeEvent = Schema.decode(Schema.parseJson(AgentEvent))

const detailOf = (body: unknown, status: number): string => {
  const detail = (body as { detail?: unknown } | null)?.detail
  if (typeof detail === "string") return detail
  return detail === undefined ? `HTTP ${status}` : JSON.stringify(detail)
}

const refusal = (response: HttpClientResponse.HttpClientResponse) =>
  response.json.pipe(
    Effect.orElseSucceed(() => null),
    Effect.flatMap((body) => Effect.fail(new StreamRefused({ status: response.status, detail: detailOf(body, response.status) })))
  )

/** A refused answer as the spec's `{detail}`, else the body's bytes as they arrive. */
const bytesOf = (
  response: HttpClientResponse.HttpClientResponse
): Stream.Stream<Uint8Array, StreamRefused | HttpClientError.ResponseError> =>
  response.status >= 300 ? Stream.fromEffect(refusal(response)) : response.stream

/** The body's Server-Sent Events, each decoded through the event Schema. */
const eventsOf = (response: HttpClientResponse.HttpClientResponse) =>
  bytesOf(response).pipe(
    Stream.decodeText(),
    Stream.pipeThroughChannel(Sse.makeChannel()),
    Stream.mapEffect((frame) =>
      decodeEvent(frame.data).pipe(
        Effect.map((event): SequencedEvent => ({ seq: Number(frame.id ?? 0), event })),
        Effect.mapError(() => new UnreadableEvent({ data: frame.data }))
      )
    )
  )

/** The live log tail's events, each decoded through its Schema. */
const logEventsOf = (response: HttpClientResponse.HttpClientResponse) =>
  bytesOf(response).pipe(
    Stream.decodeText(),
    Stream.pipeThroughChannel(Sse.makeChannel()),
    Stream.mapEffect((frame) => Effect.mapError(decodeLogEvent(frame.data), () => new UnreadableEvent({ data: frame.data })))
  )

/** An endpoint's path with its `:id` filled in. */
const pathWithId = (endpoint: { readonly path: string }, id: string) => endpoint.path.replace(":id", encodeURIComponent(id))

/**
 * Bodies read as they arrive. `chat` sends a message (`POST /chat/stream`) and `rejoin` follows a
 * session's latest (or a given) run after the event `after` (`GET /api/v1/sessions/{id}/stream`),
 * both as decoded events; interrupting one closes the connection while the run goes on on the
 * server. `backupArchive` is a backup's archive as bytes, with its length when the server gives it.
 * `logs` follows the server's log lines (`GET /api/v1/admin/logs/stream`) until interrupted.
 */
export const makeStreamingClient = (options: ClientOptions) =>
  Effect.map(HttpClient.HttpClient, (base) => {
    const http = withCredential(options)(base.pipe(HttpClient.mapRequest(HttpClientRequest.prependUrl(options.baseUrl))))
    const open = (request: HttpClientRequest.HttpClientRequest) =>
      Stream.unwrapScoped(Effect.map(http.execute(request.pipe(HttpClientRequest.setHeader("accept", "text/event-stream"))), eventsOf))
    return {
      chat: (payload: typeof ChatRequest.Type) =>
        Stream.unwrap(
          Effect.map(
            encodeChatRequest(payload),
            (body) => open(HttpClientRequest.post(chatStream.path).pipe(HttpClientRequest.bodyUnsafeJson(body)))
          )
        ),
      rejoin: (sessionId: string, query: { readonly after?: number; readonly runId?: string } = {}) =>
        open(
          HttpClientRequest.get(pathWithId(rejoinStream, sessionId)).pipe(
            HttpClientRequest.setUrlParams({
              ...(query.after === undefined ? {} : { after: String(query.after) }),
              ...(query.runId === undefined ? {} : { run_id: query.runId })
            })
          )
        ),
      logs: (query: typeof LogTailQuery.Type = {}) =>
        Stream.unwrapScoped(
          Effect.flatMap(encodeLogQuery(query), (params) =>
            Effect.map(
              http.execute(
                HttpClientRequest.get(logStream.path).pipe(
                  HttpClientRequest.setUrlParams(Object.entries(params).filter(([, value]) => value !== undefined)),
                  HttpClientRequest.setHeader("accept", "text/event-stream")
                )
              ),
              logEventsOf
            ))
        ),
      backupArchive: (backupId: string) =>
        Effect.map(http.execute(HttpClientRequest.get(pathWithId(backupDownload, backupId))), (response) => ({
          length: Number(response.headers["content-length"] ?? NaN),
          bytes: bytesOf(response)
        }))
    }
  })

export type StreamingClient = Effect.Effect.Success<ReturnType<typeof makeStreamingClient>>
