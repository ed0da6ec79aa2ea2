/**
 * Structured logs: JSON lines when output is not a terminal (services, CI), a readable format on a
 * terminal. Secrets never reach a log line because they travel as `Redacted` values.
 *
 * The level is LOG_LEVEL at start and can be changed while running (`PUT /api/v1/admin/log-level`):
 * a fiber-ref minimum would stay as it was in every fiber already forked, so the minimum is left
 * open and the logger itself drops what is below the current level.
 *
 * Every line written also goes to the live tail (`LogTail.ts`), through the same level filter.
 */
import { Context, Effect, FiberRef, HashSet, Layer, Logger, LogLevel } from "effect"
import type { LogLevelName } from "../contract/LogLevels.ts"
import { LogTail, makeTail } from "./LogTail.ts"

const levels: Record<LogLevelName, LogLevel.LogLevel> = {
  trace: LogLevel.Trace,
  debug: LogLevel.Debug,
  info: LogLevel.Info,
  warning: LogLevel.Warning,
  error: LogLevel.Error,
  fatal: LogLevel.Fatal,
  none: LogLevel.None
}

export interface LogLevelControlShape {
  readonly get: Effect.Effect<LogLevelName>
  readonly set: (level: LogLevelName) => Effect.Effect<void>
  /** Whether a line at `level` would be written now: a caller outside Effect skips building one that would not. */
  readonly enabled: (level: LogLevel.LogLevel) => boolean
}

/** The running log level of this process. */
export class LogLevelControl extends Context.Tag("cairn/LogLevelControl")<LogLevelControl, LogLevelControlShape>() {}

/**
 * The console logger (JSON lines, or pretty on a terminal) in place of Effect's default and of the
 * pretty one the platform's `runMain` installs; every logger (an embedder's too) goes through the
 * level filter.
 */
export const layer = (initial: LogLevelName, pretty = process.stdout.isTTY === true) => {
  let current = initial
  /** The one test of a line against the running level: the loggers' filter and `enabled` both. */
  const enabled = (level: LogLevel.LogLevel) => LogLevel.greaterThanEqual(level, levels[current])
  const atLevel = <M, O>(logger: Logger.Logger<M, O>) => Logger.filterLogLevel(logger, enabled)
  const output = pretty ? Logger.prettyLoggerDefault : Logger.withConsoleLog(Logger.jsonLogger)
  const { tail, push } = makeTail()
  const tailLogger = atLevel(Logger.make(push))
  const loggers = Layer.scopedDiscard(
    Effect.locallyScopedWith(
      FiberRef.currentLoggers,
      (installed) =>
        HashSet.add(
          HashSet.map(
            installed,
            (logger: Logger.Logger<unknown, any>): Logger.Logger<unknown, any> =>
              logger === Logger.defaultLogger || logger === Logger.prettyLoggerDefault ? atLevel(output) : atLevel(logger)
          ),
          tailLogger
        )
    )
  )
  return Layer.mergeAll(
    Layer.succeed(LogTail, tail),
    Logger.minimumLogLevel(LogLevel.All),
    loggers,
    Layer.succeed(LogLevelControl, {
      get: Effect.sync(() => current),
      set: (level) =>
        Effect.sync(() => {
          current = level
        }),
      enabled
    })
  )
}
