/**
 * OpenTelemetry traces over OTLP/HTTP when OTEL_EXPORTER_OTLP_ENDPOINT is set: a span per request
 * (from the HTTP server) and per SQL statement (from @effect/sql). Off, spans are not even made:
 * Effect's own tracer and the HTTP server's request span would cost CPU on every request for
 * nothing anyone reads.
 */
import { NodeSdk } from "@effect/opentelemetry"
import { HttpMiddleware } from "@effect/platform"
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http"
import { BatchSpanProcessor } from "@opentelemetry/sdk-trace-base"
import { Layer, Option } from "effect"

export const layer = (endpoint: Option.Option<string>) =>
  Option.match(endpoint, {
    onNone: () => Layer.merge(Layer.setTracerEnabled(false), Layer.locallyScoped(HttpMiddleware.currentTracerDisabledWhen, () => true)),
    onSome: (base) =>
      NodeSdk.layer(() => ({
        resource: { serviceName: "cairn" },
        spanProcessor: new BatchSpanProcessor(
          new OTLPTraceExporter({ url: `${base.replace(/\/$/, "")}/v1/traces` }),
          { scheduledDelayMillis: 500 }
        )
      }))
  })
