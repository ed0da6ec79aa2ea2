/**
 * A fault-injection switch for tests (docs/operations.md, "Fault injection"): with
 * CAIRN_FAULT_KILL_AT set to a step's name, the process kills itself with SIGKILL (a real `kill
 * -9`: no finalizer, no flush) the first time an inbound item reaches that step; with
 * CAIRN_FAULT_KILL_MATCH set, only an item whose source id or summary holds that text counts at
 * the ledger's steps (after-receive, after-route). Off by default; never set it on a server that
 * serves anyone. The steps, in the order an item meets them:
 *   after-receive  the item is recorded in the inbound ledger, its source not yet answered
 *   after-route    the routing's decision (and the tasks it queued) committed
 *   mid-run        the item's run has started, its answer not yet recorded
 *   after-answer   the answer is recorded, its delivery not yet begun
 *   mid-send       a delivery's send is on its way (CAIRN_FAULT_KILL_DELAY_MS after it began, default 100)
 *   after-send     the send went out, its outcome not yet recorded
 */
import { Effect } from "effect"

export const faultSteps = ["after-receive", "after-route", "mid-run", "after-answer", "mid-send", "after-send"] as const
export type FaultStep = (typeof faultSteps)[number]

/** Whether the switch names this step (a caller with a costly look first asks). */
export const armed = (step: FaultStep) => process.env.CAIRN_FAULT_KILL_AT === step

const kill = () => process.kill(process.pid, "SIGKILL")

/** Kills the process here when the switch names this step. */
export const faultPoint = (step: FaultStep): Effect.Effect<void> => Effect.sync(() => (armed(step) ? kill() : undefined))

/** `faultPoint` for an inbound item, which counts only when it holds CAIRN_FAULT_KILL_MATCH (when set). */
export const faultPointFor = (step: FaultStep, item: string): Effect.Effect<void> =>
  Effect.sync(() => (armed(step) && item.includes(process.env.CAIRN_FAULT_KILL_MATCH ?? "") ? kill() : undefined))

/** For a send under way: kills the process a moment after it began when the switch names `mid-send`. */
export const midSend = Effect.sync(() => {
  if (!armed("mid-send")) return
  setTimeout(kill, Number(process.env.CAIRN_FAULT_KILL_DELAY_MS ?? 100))
})
