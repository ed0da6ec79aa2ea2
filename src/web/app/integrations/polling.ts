/** How often the console reads an integration's live state again (plain values: the tests import them). */

/** The HUD: the spec's "polled by the HUD every 30 seconds". */
export const HUD_POLL_MS = 30_000

/** A sidebar section's status dot: well within the mailbox's shortest poll interval. */
export const READINESS_POLL_MS = 10_000

/** An integration's workers: a state can change at any time (a failure, a restart on new settings). */
export const WORKERS_POLL_MS = 10_000

/** …and sooner while one is on its way to another state (starting, or waiting out a backoff). */
export const WORKERS_SETTLING_POLL_MS = 1_000
