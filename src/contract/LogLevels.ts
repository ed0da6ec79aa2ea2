/** The log levels LOG_LEVEL and `PUT /api/v1/admin/log-level` accept, most verbose first. */
export const logLevels = ["trace", "debug", "info", "warning", "error", "fatal", "none"] as const
export type LogLevelName = (typeof logLevels)[number]
