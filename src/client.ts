/**
 * A typed client for Cairn, derived from the same HttpApi definition the server serves:
 * `const cairn = yield* makeClient({ baseUrl, apiKey })` then `cairn.settings.list()`.
 */
import { FetchHttpClient, HttpApiClient, HttpClient, HttpClientRequest } from "@effect/platform"
import { Effect } from "effect"
import { CairnApi } from "./Api.ts"

export interface ClientOptions {
  readonly baseUrl: string
  readonly apiKey?: string
}

export const makeClient = (options: ClientOptions) =>
  HttpApiClient.make(CairnApi, {
    baseUrl: options.baseUrl,
    transformClient: options.apiKey
      ? HttpClient.mapRequest(HttpClientRequest.bearerToken(options.apiKey))
      : undefined
  })

/** The client with the platform's fetch-based HTTP client already provided. */
export const makeFetchClient = (options: ClientOptions) =>
  makeClient(options).pipe(Effect.provide(FetchHttpClient.layer))

export type CairnClient = Effect.Effect.Success<ReturnType<typeof makeClient>>
export { CairnApi }
