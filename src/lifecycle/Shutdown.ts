/**
 * The shutdown signal: completed when the HTTP server begins its graceful stop, before it waits
 * for open connections. Long-lived work behind open responses (agent runs feeding SSE streams)
 * listens for it and ends with a final event, so those streams close cleanly instead of being cut.
 */
import { Context, Deferred, Layer } from "effect"

export class ShutdownSignal extends Context.Tag("cairn/ShutdownSignal")<ShutdownSignal, Deferred.Deferred<void>>() {
  static readonly layer = Layer.effect(ShutdownSignal, Deferred.make<void>())
}
