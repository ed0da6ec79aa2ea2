/**
 * The typed client (`src/client.ts`) for tests: calls through the same contract a browser or the
 * CLI uses, run as Promises. `call` answers the success; `failsWith` answers the typed failure of
 * an expected class (its class says the status, its `detail` says the rest).
 */
import { FetchHttpClient, HttpApiClient, HttpClient, HttpClientError, HttpClientRequest } from "@effect/platform"
import { Cause, Effect, Either, Exit, FiberRef, Schema } from "effect"
import { CairnApi, type CairnClient } from "../../src/client.ts"

export type { CairnClient }

export interface ClientCalls {
  /** Runs a client call: resolves with its answer, rejects with its failure. */
  readonly call: <A, E>(f: (client: CairnClient) => Effect.Effect<A, E>) => Promise<A>
  /** Runs a client call: resolves with its answer or its typed failure, as an Either. */
  readonly attempt: <A, E>(f: (client: CairnClient) => Effect.Effect<A, E>) => Promise<Either.Either<A, E>>
  /** Runs a client call that must fail with an error of `cls`; resolves with that error. */
  /**
   * The call failed with an error of this class. The wire body of every error is the spec's
   * `{detail}` with no tag, so the client knows a failure by its status: a 404 decodes as the
   * contract's `NotFound` whichever domain raised it (the detail says which thing was missing).
   */
  readonly failsWith: <X, A, E>(
    cls: abstract new(...args: any) => X,
    f: (client: CairnClient) => Effect.Effect<A, E>
  ) => Promise<X>
}

/** What a failure was, for an assertion message: its tag and status or detail. */
const describeFailure = (error: unknown): string => {
  if (HttpClientError.isHttpClientError(error) && error._tag === "ResponseError") {
    return `${error._tag} (${error.reason}, status ${error.response.status})`
  }
  const tagged = error as { _tag?: string; detail?: unknown }
  return `${tagged?._tag ?? String(error)} ${JSON.stringify(tagged?.detail ?? "")}`
}

const runEither = <A, E>(effect: Effect.Effect<A, E>): Promise<Either.Either<A, E>> =>
  Effect.runPromiseExit(effect).then((exit) =>
    Exit.isSuccess(exit)
      ? Either.right(exit.value)
      : Either.match(Cause.failureOrCause(exit.cause), {
        onLeft: (error) => Either.left(error),
        // A defect or an interruption is no answer of the API: the test fails with it.
        onRight: (cause) => Promise.reject(Cause.squash(cause))
      })
  )

/** Where a call of the shared client goes, and with which bearer credential (none when null). */
interface Target {
  readonly baseUrl: string
  readonly token: string | null
}

const currentTarget = FiberRef.unsafeMake<Target>({ baseUrl: "", token: null })

/**
 * One typed client for the whole test process, built on first use; each call says its server and
 * credential through `currentTarget`. Deriving the client from the API (`HttpApiClient.make`) takes
 * 150-400 ms of CPU, and the suite made one for every server it started and every `as(token)`:
 * about a tenth of a test worker's CPU. The calls, their encoding and decoding are the same.
 */
let shared: CairnClient | undefined
const sharedClient = (): CairnClient => (shared ??= Effect.runSync(
  HttpApiClient.make(CairnApi, {
    transformClient: HttpClient.mapRequestEffect((request) =>
      Effect.map(FiberRef.get(currentTarget), ({ baseUrl, token }) => {
        const aimed = HttpClientRequest.prependUrl(request, baseUrl)
        return token === null ? aimed : HttpClientRequest.bearerToken(aimed, token)
      })
    )
  }).pipe(Effect.provide(FetchHttpClient.layer))
))

/** Client calls against `baseUrl` with `token` as the bearer credential (none when null). */
export const clientCalls = (baseUrl: string, token: string | null): ClientCalls => {
  const target: Target = { baseUrl, token }
  const run = <A, E>(f: (client: CairnClient) => Effect.Effect<A, E>) => runEither(Effect.locally(f(sharedClient()), currentTarget, target))
  return {
    call: (f) =>
      run(f).then(
        Either.getOrElse((error) => {
          throw new Error(`The call failed: ${describeFailure(error)}`, { cause: error })
        })
      ),
    attempt: (f) => run(f),
    failsWith: (cls, f) =>
      run(f).then((result) => {
        if (Either.isRight(result)) throw new Error(`Expected a ${cls.name}, the call succeeded`)
        if (!(result.left instanceof cls)) throw new Error(`Expected a ${cls.name}, got ${describeFailure(result.left)}`)
        return result.left
      })
  }
}

/**
 * A payload as the server would read it, from what a caller would send: the client's payload type
 * is the schema's decoded type, where a field with a server-side default is required, so the
 * schema itself fills the defaults in (`withDefaults(ChatRequest)({ message: "Hi" })`).
 */
export const withDefaults = <A, I>(schema: Schema.Schema<A, I>) => (input: I): A => Schema.decodeSync(schema)(input)
