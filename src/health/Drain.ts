/**
 * The first step of a stop (SIGTERM, SIGINT, a restart): readiness turns false and the server
 * keeps serving for DRAIN_DELAY_MS, so a load balancer checking `/health/ready` stops sending
 * before connections are closed; then the shutdown proceeds as before (http/Server.ts: streams end
 * with a final event, idle connections close, the rest is cut after SHUTDOWN_GRACE_MS).
 *
 * It works as a finalizer of a layer built after the HTTP server: a scope closes its finalizers
 * last in, first out, so this one runs before the server's own.
 */
import { Effect, Layer } from "effect"
import { AppConfig } from "../config/AppConfig.ts"
import { Readiness } from "./Readiness.ts"

export const drainFirst = Layer.scopedDiscard(
  Effect.gen(function*() {
    const { drainDelayMs } = yield* AppConfig
    const readiness = yield* Readiness
    yield* Effect.addFinalizer(() => readiness.beginDrain(drainDelayMs))
  })
)
