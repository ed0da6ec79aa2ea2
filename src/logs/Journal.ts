/**
 * The agent's own trace: every turn, LLM call, tool call and hook as a span kept in the database
 * (whatever OTLP does), so an operator can read what a bot did without a tracing backend. Spans
 * are queued and written in batches (db/BatchWriter.ts); nothing waits on them. A span's parent is
 * the span it ran inside, carried in the context, so a hook fired by a tool call nests under it.
 * Spans older than LOG_RETENTION_DAYS are dropped hourly.
 */
import { Cause, Context, Duration, Effect, Exit, Schedule } from "effect"
import { randomUUID } from "node:crypto"
import { makeBatchWriter } from "../db/BatchWriter.ts"
import { Hooks } from "../hooks/Hooks.ts"
import { auditedText } from "../secrets/Patterns.ts"
import { LogRetentionDays } from "../settings/Model.ts"
import { Settings } from "../settings/Settings.ts"
import { failureText } from "../telemetry/Failure.ts"
import type { SpanKind } from "./Model.ts"
import { LogsRepo, type SpanRecord } from "./Repo.ts"

export const flushMs = 500

/** How often old spans are pruned. */
const pruneCadence = Schedule.spaced(Duration.hours(1))

/**
 * The span the current fiber runs inside, for its children's `parent_id`. A context entry rather
 * than a fiber ref: giving it to a span's body is one context copy, where `Effect.locally` is a
 * guarded acquire-use-release of two fiber-ref writes (a turn runs several spans).
 */
class ParentSpan extends Context.Reference<ParentSpan>()("cairn/Journal/ParentSpan", { defaultValue: (): string | null => null }) {}

/** The enclosing span's id, read in one runtime step. */
const withParentSpan = <A, E, R>(f: (parentId: string | null) => Effect.Effect<A, E, R>) =>
  Effect.withFiberRuntime<A, E, R>((fiber) => f(Context.get(fiber.currentContext, ParentSpan)))

export interface SpanMeta {
  readonly correlationId: string
  readonly kind: SpanKind
  readonly name: string
  readonly botId: string | null
  readonly sessionId: string | null
  readonly attributes?: Record<string, unknown>
}

/** What a finished span adds: attributes read off the result, and an error when the result is one. */
export interface SpanOutcome {
  readonly attributes?: Record<string, unknown>
  readonly error?: string | null
}

export class Journal extends Effect.Service<Journal>()("cairn/Journal", {
  scoped: Effect.gen(function*() {
    const repo = yield* LogsRepo
    const settings = yield* Settings
    const writer = yield* makeBatchWriter("trace spans", repo.insertMany, flushMs)
    const hooks = yield* Hooks

    // A hook's callbacks and webhooks run on their own, after the turn moves on: its span marks
    // when it fired, within the span that fired it, and who was listening.
    yield* hooks.observe((event, context, listening) =>
      context.correlation_id === null
        ? Effect.void
        : withParentSpan((parentId) =>
          writer.push({
            id: randomUUID(),
            correlationId: context.correlation_id!,
            parentId,
            kind: "hook",
            name: event,
            botId: context.bot_id,
            sessionId: context.session_id,
            startedAt: new Date(),
            durationMs: 0,
            status: "ok",
            error: null,
            attributes: { ...listening }
          })
        )
    )

    yield* Effect.gen(function*() {
      const days = yield* settings.get(LogRetentionDays)
      const dropped = yield* repo.prune(new Date(Date.now() - days * 24 * 3600 * 1000))
      if (dropped > 0) yield* Effect.logInfo(`Dropped ${dropped} trace spans older than ${days} days (LOG_RETENTION_DAYS)`)
    }).pipe(
      Effect.catchAllCause((cause) => Effect.logWarning("Pruning old trace spans failed", cause)),
      Effect.repeat(pruneCadence),
      Effect.forkScoped
    )

    /**
     * `effect` as a span: timed, recorded with its outcome (`ok`, `error` with the failure's
     * message, or `cancelled` when interrupted), and the parent of the spans it runs.
     */
    const span = <A, E, R>(meta: SpanMeta, effect: Effect.Effect<A, E, R>, outcome?: (value: A) => SpanOutcome): Effect.Effect<A, E, R> =>
      withParentSpan((parentId) => {
        const id = randomUUID()
        const startedAt = new Date()
        const record = (exit: Exit.Exit<A, E>) => {
          const after = Exit.isSuccess(exit) && outcome ? outcome(exit.value) : {}
          const failure = Exit.isSuccess(exit)
            ? (after.error ?? null)
            : Cause.isInterruptedOnly(exit.cause)
            ? null
            : failureText(exit.cause)
          // Error texts may quote what failed (a URL with a password in it): redacted like arguments.
          const error = failure === null ? null : auditedText(failure)
          return writer.push(
            {
              id,
              correlationId: meta.correlationId,
              parentId,
              kind: meta.kind,
              name: meta.name,
              botId: meta.botId,
              sessionId: meta.sessionId,
              startedAt,
              durationMs: Date.now() - startedAt.getTime(),
              status: Exit.isFailure(exit) && Cause.isInterruptedOnly(exit.cause) ? "cancelled" : error !== null ? "error" : "ok",
              error,
              attributes: { ...meta.attributes, ...after.attributes }
            } satisfies SpanRecord
          )
        }
        return effect.pipe(Effect.provideService(ParentSpan, id), Effect.onExit(record))
      })

    const list = <A>(read: Effect.Effect<A>) => Effect.zipRight(writer.flush, read)

    return {
      span,
      /** Writes what is queued now (the routes call it before they read, so a turn just ended shows). */
      flush: writer.flush,
      turns: (filter: Parameters<typeof repo.turns>[0]) => list(repo.turns(filter)),
      toolCalls: (filter: Parameters<typeof repo.toolCalls>[0]) => list(repo.toolCalls(filter)),
      trace: (correlationId: string) => list(repo.trace(correlationId))
    } as const
  }),
  dependencies: [Hooks.Default, LogsRepo.Default, Settings.Default]
}) {}
