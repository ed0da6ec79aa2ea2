/**
 * A graceful restart: the process shuts down as on SIGTERM (runs finish their streams, the
 * database closes) and exits with `restartExitCode`, for its supervisor to start it again. Only
 * where a supervisor will (AppConfig's `supervisor`: systemd, pm2, or SUPERVISED=true for a
 * container with a restart policy or a shell loop). Without one, a restart would be a stop, so it
 * is refused and nothing happens.
 */
import { Effect } from "effect"

/** EX_TEMPFAIL: a failure to a supervisor that restarts on failure (systemd `Restart=on-failure`). */
export const restartExitCode = 75

let restartRequested = false

/** Whether this process is exiting to be restarted (the CLI's teardown picks the exit code by it). */
export const isRestartRequested = () => restartRequested

/** Begins the graceful shutdown once the answer has had time to leave. */
export const requestRestart = Effect.sync(() => {
  restartRequested = true
  setTimeout(() => process.kill(process.pid, "SIGTERM"), 200).unref()
})
