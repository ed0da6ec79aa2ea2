/**
 * Workers: an integration's long-running work (a poller, a bridge's reconnecting listener), run by
 * the server as a supervised fiber in its own scope instead of an ad-hoc timer. Types only.
 */
import type { Effect } from "effect"

export interface WorkerContext {
  /** The worker's name (unique within its integration). */
  readonly name: string
  /** Aborted when the worker must stop: shutdown, a settings change, leadership lost. */
  readonly signal: AbortSignal
  /** The integration's settings as resolved when this run started (stored, environment, default). */
  readonly settings: Readonly<Record<string, string | undefined>>
  /** Waits `ms`; answers false at once when the worker is stopped meanwhile. */
  readonly sleep: (ms: number) => Promise<boolean>
  /** Shown in the worker's status (`detail`): the last poll, a count, a connection state. */
  readonly report: (detail: Record<string, unknown>) => void
  /**
   * Records the worker's last real contact with what it connects to (a login, a ping, a call):
   * `connected`, `failing` with the reason, or `paused` (someone paused it on purpose). The
   * integration's status (console, `/api/v1/admin/integrations`, `cairn status`) is read from it.
   */
  readonly contact: (state: ContactState, reason?: string) => void
}

/** What a worker's last contact found. */
export type ContactState = "connected" | "failing" | "paused"

export interface WorkerDefinition<Context = unknown> {
  /** Unique within the integration; default "worker". Letters, digits, '-', '_'. */
  readonly name?: string
  readonly description?: string
  /**
   * Settings that must resolve (stored, environment or default) before it starts; while one is
   * missing the worker waits, and it stops when one goes.
   */
  readonly requiredSettings?: ReadonlyArray<string>
  /** Exactly one server process on the database runs it (the others stand by and take over). */
  readonly singleton?: boolean
  /**
   * It connects to something and reports each contact (`worker.contact`): until its first, the
   * integration shows `connecting`. A worker without it shows `connected` while it runs.
   */
  readonly connects?: boolean
  /** Waits this long after the server starts (and after each settings change) before starting. */
  readonly startDelayMs?: number
  /**
   * The work: an async function (or one returning an Effect) that runs until `worker.signal`
   * aborts. A throw or rejection is a failure: logged with the integration's name, shown in the
   * status, and the worker is started again after an exponential backoff with jitter. Returning
   * ends it until its settings change or the server restarts.
   */
  readonly run: (cairn: Context, worker: WorkerContext) => void | Promise<void> | Effect.Effect<void, unknown>
}

/** The state of a worker as the admin API shows it. */
export type WorkerState =
  | "waiting_for_settings"
  | "starting"
  | "running"
  | "backing_off"
  | "leader_elsewhere"
  | "finished"
  | "stopped"
