/**
 * A fault-injection switch for tests (docs/operations.md, "Fault injection"): with
 * CAIRN_FAULT_KILL_AT set to a step's name, the process kills itself with SIGKILL (a real `kill
 * -9`: no finalizer, no flush) the first time an inbound item reaches that step; with
 * CAIRN_FAULT_KILL_MATCH set, only an item whose source id or summary (at the ledger's steps) or
 * whose task's prompt (at the sends) holds that text counts. Off by default; never set it on a server that
 * serves anyone. The steps, in the order an item meets them:
 *   after-receive  the item is recorded in the inbound ledger, its source not yet answered
 *   after-route    the routing's decision (and the tasks it queued) committed
 *   mid-run        the item's run has started, its answer not yet recorded
 *   after-run      the item's run has ended, its answer stored, its task not yet marked done
 *   after-answer   the answer is recorded, its delivery not yet begun
 *   mid-send       a delivery's send is on its way (CAIRN_FAULT_KILL_DELAY_MS after it began, default 100)
 *   after-send     the send went out, its outcome not yet recorded
 */
import { Effect } from "effect"

/** The inbound pipeline's steps, which the chaos run (test/chaos/) kills a server at in turn. */
export const faultSteps = ["after-receive", "after-route", "mid-run", "after-run", "after-answer", "mid-send", "after-send"] as const
export type FaultStep = (typeof faultSteps)[number]

/** Whether the switch names this step (a caller with a costly look first asks). */
export const armed = (step: FaultStep) => process.env.CAIRN_FAULT_KILL_AT === step

const kill = () => process.kill(process.pid, "SIGKILL")

/** Kills the process here when the switch names this step and the item holds CAIRN_FAULT_KILL_MATCH (when set). */
export const faultPointFor = (step: FaultStep, item: string): Effect.Effect<void> =>
  Effect.sync(() => (armed(step) && item.includes(process.env.CAIRN_FAULT_KILL_MATCH ?? "") ? kill() : undefined))

/**
 * For a send under way: kills the process a moment after it began when the switch names `mid-send`
 * and the item (the task's prompt) holds CAIRN_FAULT_KILL_MATCH, so a send left over from an earlier
 * item does not fire it.
 */
export const midSendFor = (item: string): Effect.Effect<void> =>
  Effect.sync(() => {
    if (!armed("mid-send") || !item.includes(process.env.CAIRN_FAULT_KILL_MATCH ?? "")) return
    setTimeout(kill, Number(process.env.CAIRN_FAULT_KILL_DELAY_MS ?? 100))
  })
