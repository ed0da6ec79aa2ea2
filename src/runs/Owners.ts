/**
 * Who holds a run's lock or a task's lease: `<host>:<pid>:<random>`, one per server process start.
 * On this host a holder's process can be checked at once, so a restart after a crash frees what the
 * dead process held without waiting for its heartbeat or lease to lapse.
 */
import { randomUUID } from "node:crypto"
import * as os from "node:os"

/** The owners alive in this process (one per server built in it; tests and embedders build several). */
const liveHere = new Set<string>()

/** A new owner, alive until `release`. */
export const makeOwner = () => {
  const owner = `${os.hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`
  liveHere.add(owner)
  return owner
}

export const releaseOwner = (owner: string) => void liveHere.delete(owner)

/**
 * Whether the process an owner names is certainly gone: it ran on this host and its pid is not
 * running, or it is this pid under an earlier start (a container restarted keeps its pid). Another
 * host's owner is never known to be gone here: its heartbeat or lease tells.
 */
export const ownerGone = (owner: string, self: string): boolean => {
  if (owner === self) return false
  const parts = owner.split(":")
  if (parts.length < 3) return false
  parts.pop()
  const pid = Number(parts.pop())
  if (parts.join(":") !== os.hostname() || !Number.isInteger(pid) || pid <= 0) return false
  // This pid: another server in this process, or an earlier start under the same pid (a container restarted).
  if (pid === process.pid) return !liveHere.has(owner)
  try {
    process.kill(pid, 0)
    return false
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "ESRCH"
  }
}
