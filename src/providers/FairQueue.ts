/**
 * The waiting line of a provider's call slots, fair across callers: each caller (a credential) has
 * its own first-in-first-out lane, and freed slots go to the lanes in turn (round-robin), so a
 * caller with 300 waiting calls cannot make another caller's one call wait behind them. A caller
 * that had nothing waiting joins ahead of the callers already served (after other newcomers): its
 * call goes at the next free slot, whatever others have piled up. Pure: the gate (`Gate.ts`)
 * decides when a slot is free.
 */
export class FairQueue<W> {
  private readonly lanes = new Map<string, Array<W>>()
  /** Callers with waiting calls in serving order: the newcomers first (`fresh` of them), then the served, least recently served first. */
  private readonly order: Array<string> = []
  private fresh = 0
  private count = 0

  get size(): number {
    return this.count
  }

  /** Puts a waiter at the end of its caller's lane; a caller with no lane joins after the other newcomers. */
  push(caller: string, waiter: W): void {
    this.count++
    const lane = this.lanes.get(caller)
    if (lane) {
      lane.push(waiter)
      return
    }
    this.lanes.set(caller, [waiter])
    this.order.splice(this.fresh, 0, caller)
    this.fresh++
  }

  /**
   * The next waiter to serve, removed: the oldest of the first lane in turn that `eligible` lets be
   * served (every lane when not given); undefined when none. Lanes passed over keep their place.
   */
  next(eligible?: (caller: string) => boolean): W | undefined {
    const at = eligible ? this.order.findIndex(eligible) : 0
    if (at < 0 || at >= this.order.length) return undefined
    const [caller] = this.order.splice(at, 1)
    if (at < this.fresh) this.fresh--
    const lane = this.lanes.get(caller)!
    const waiter = lane.shift()!
    this.count--
    // Served: the lane goes to the back of the turn, or away when it is empty.
    if (lane.length > 0) this.order.push(caller)
    else this.lanes.delete(caller)
    return waiter
  }

  /** Takes a waiter out (one that gave up); answers whether it was still waiting. */
  remove(caller: string, waiter: W): boolean {
    const lane = this.lanes.get(caller)
    const index = lane ? lane.indexOf(waiter) : -1
    if (!lane || index < 0) return false
    lane.splice(index, 1)
    this.count--
    if (lane.length === 0) {
      this.lanes.delete(caller)
      const at = this.order.indexOf(caller)
      this.order.splice(at, 1)
      if (at < this.fresh) this.fresh--
    }
    return true
  }
}
