/**
 * What a benchmark reads from Linux's /proc: a process's CPU time and resident memory (a process
 * or thread already gone reads as 0), and the machine's load.
 */
import * as fs from "node:fs"

/** /proc counts CPU in clock ticks of 1/100 s (USER_HZ). */
const TICK_MS = 10

/**
 * User and system CPU in ms from a `stat` file: a process's (`/proc/<pid>/stat`) or one thread's
 * (`/proc/<pid>/task/<tid>/stat`).
 */
export const cpuOf = (statFile: string): { readonly user: number; readonly system: number } => {
  try {
    const stat = fs.readFileSync(statFile, "utf8")
    // The fields after the command's name, which is in parentheses and may hold spaces.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
    return { user: Number(fields[11]) * TICK_MS, system: Number(fields[12]) * TICK_MS }
  } catch {
    return { user: 0, system: 0 }
  }
}

/** The CPU time (user + system) a process has used, ms. */
export const cpuMs = (pid: number | undefined): number => {
  const { user, system } = cpuOf(`/proc/${pid}/stat`)
  return user + system
}

/** A process's resident set size, MB. */
export const rssMb = (pid: number | undefined): number => {
  try {
    return Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0) / 1024
  } catch {
    return 0
  }
}

/** The machine's load average over 1, 5 and 15 minutes, as /proc/loadavg gives it. */
export const loadAverage = (): string => fs.readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ")
