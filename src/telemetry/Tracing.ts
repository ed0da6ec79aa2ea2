/**
 * OpenTelemetry traces over OTLP/HTTP when OTEL_EXPORTER_OTLP_ENDPOINT is set: a span per request
 * (from the HTTP server) and per SQL statement (from @effect/sql). Off, spans are not even made:
 * Effect's own tracer and the HTTP server's request span would cost CPU on every request for
 * nothing anyone reads.
 */
import { HttpMiddleware } from "@effect/platform"
import { Effect, Layer, Option } from "effect"

/** The exporter's packages load only when tracing is on: a few hundred modules a start without it skips. */
const otlpLayer = (base: string) =>
  Layer.unwrapEffect(
    Effect.promise(async () => {
      const [{ NodeSdk }, { OTLPTraceExporter }, { BatchSpanProcessor }] = await Promise.all([
        import("@effect/opentelemetry"),
        import("@opentelemetry/exporter-trace-otlp-http"),
        import("@opentelemetry/sdk-trace-base")
      ])
      return NodeSdk.layer(() => ({
        resource: { serviceName: "cairn" },
        spanProcessor: new BatchSpanProcessor(new OTLPTraceExporter({ url: `${base.replace(/\/$/, "")}/v1/traces` }), {
          scheduledDelayMillis: 500
        })
      }))
    })
  )

export const layer = (endpoint: Option.Option<string>) =>
  Option.match(endpoint, {
    onNone: () => Layer.merge(Layer.setTracerEnabled(false), Layer.locallyScoped(HttpMiddleware.currentTracerDisabledWhen, () => true)),
    onSome: otlpLayer
  })
