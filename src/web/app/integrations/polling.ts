/** How often the console reads an integration's live state again (plain values: the tests import them). */

/** The HUD: the spec's "polled by the HUD every 30 seconds". */
export const HUD_POLL_MS = 30_000

/** A sidebar section's readiness dot. */
export const READINESS_POLL_MS = 30_000
