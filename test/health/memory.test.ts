/** The memory limits: a cgroup's limit file read, and the limits of 0 taken as shares of it. */
import * as os from "node:os"
import { describe, expect, it } from "vitest"
import { cgroupLimitFiles, effectiveLimits, hardShare, memoryLimitBytes, parseCgroupLimit, softShare } from "../../src/health/Memory.ts"

const mb = 1024 * 1024

describe("memory limits", () => {
  it("reads cgroups v2 and v1 limit files, `max` and v1's near-2^63 meaning none", () => {
    expect(parseCgroupLimit("536870912\n")).toBe(512 * mb)
    expect(parseCgroupLimit("max\n")).toBeNull()
    expect(parseCgroupLimit("9223372036854771712\n")).toBeNull()
    expect(parseCgroupLimit("")).toBeNull()
    expect(parseCgroupLimit("garbage")).toBeNull()
  })

  it("finds the limit files of the process's cgroups, v2 with every ancestor, v1 with the root", () => {
    expect(cgroupLimitFiles("0::/system.slice/cairn.service\n")).toEqual([
      "/sys/fs/cgroup/system.slice/cairn.service/memory.max",
      "/sys/fs/cgroup/system.slice/memory.max",
      "/sys/fs/cgroup/memory.max"
    ])
    expect(cgroupLimitFiles("0::/\n")).toEqual(["/sys/fs/cgroup/memory.max"])
    expect(cgroupLimitFiles("12:cpu,cpuacct:/docker/abc\n4:memory:/docker/abc\n0::/docker/abc\n")).toEqual([
      "/sys/fs/cgroup/memory/docker/abc/memory.limit_in_bytes",
      "/sys/fs/cgroup/memory/memory.limit_in_bytes",
      "/sys/fs/cgroup/docker/abc/memory.max",
      "/sys/fs/cgroup/docker/memory.max",
      "/sys/fs/cgroup/memory.max"
    ])
    expect(cgroupLimitFiles("")).toEqual([])
  })

  it("takes the lowest limit found, never above the machine's memory, else the machine's", () => {
    const files = (limits: Record<string, number | null>) => (file: string) => limits[file] ?? null
    const service = "0::/system.slice/cairn.service\n"
    expect(memoryLimitBytes(files({ "/sys/fs/cgroup/system.slice/cairn.service/memory.max": 512 * mb }), service)).toBe(512 * mb)
    expect(
      memoryLimitBytes(
        files({ "/sys/fs/cgroup/system.slice/cairn.service/memory.max": 512 * mb, "/sys/fs/cgroup/system.slice/memory.max": 256 * mb }),
        service
      )
    ).toBe(256 * mb)
    expect(memoryLimitBytes(files({ "/sys/fs/cgroup/memory/memory.limit_in_bytes": 300 * mb }), "4:memory:/\n")).toBe(300 * mb)
    expect(memoryLimitBytes(files({}), service)).toBe(os.totalmem())
    expect(memoryLimitBytes(files({ "/sys/fs/cgroup/memory.max": os.totalmem() * 2 }), "0::/\n")).toBe(os.totalmem())
  })

  it("keeps a limit that is set and makes a 0 its share of the memory limit", () => {
    expect(effectiveLimits(300, 400, 1024 * mb)).toEqual({ softMb: 300, hardMb: 400 })
    expect(effectiveLimits(0, 0, 1000 * mb)).toEqual({ softMb: Math.floor(1000 * softShare), hardMb: Math.floor(1000 * hardShare) })
    expect(effectiveLimits(0, 700, 1000 * mb)).toEqual({ softMb: 800, hardMb: 700 })
  })
})
