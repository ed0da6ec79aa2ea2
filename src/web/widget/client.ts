/**
 * The typed client as the widget uses it: every request carries the newest widget token (read as it
 * starts, so a renewal needs no new client), and a 401 asks the host for a fresh token.
 */
import { FetchHttpClient, HttpApiClient, HttpClient, HttpClientRequest } from "@effect/platform"
import { Effect } from "effect"
import { CairnApi, type CairnClient } from "../../client.ts"

export const liveClient = (baseUrl: string, token: () => string, onUnauthorized: () => void): CairnClient =>
  Effect.runSync(
    HttpApiClient.make(CairnApi, {
      baseUrl,
      transformClient: (client) =>
        client.pipe(
          HttpClient.mapRequest((request) => HttpClientRequest.bearerToken(request, token())),
          HttpClient.tap((response) =>
            Effect.sync(() => {
              if (response.status === 401) onUnauthorized()
            })
          )
        )
    }).pipe(Effect.provide(FetchHttpClient.layer))
  )
