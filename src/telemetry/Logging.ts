/**
 * Structured logs at LOG_LEVEL: JSON lines when output is not a terminal (services, CI), a readable
 * format on a terminal. Secrets never reach a log line because they travel as `Redacted` values.
 */
import { Layer, Logger, LogLevel } from "effect"
import type { LogLevelName } from "../config/AppConfig.ts"

const levels: Record<LogLevelName, LogLevel.LogLevel> = {
  trace: LogLevel.Trace,
  debug: LogLevel.Debug,
  info: LogLevel.Info,
  warning: LogLevel.Warning,
  error: LogLevel.Error,
  fatal: LogLevel.Fatal,
  none: LogLevel.None
}

export const layer = (level: LogLevelName, pretty = process.stdout.isTTY === true) =>
  Layer.merge(
    Logger.minimumLogLevel(levels[level]),
    pretty ? Logger.pretty : Logger.replace(Logger.defaultLogger, Logger.jsonLogger)
  )
