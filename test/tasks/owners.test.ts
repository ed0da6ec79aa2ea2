/** Who holds a run or a task lease, and when that holder is certainly gone (pure, with real processes). */
import { spawnSync } from "node:child_process"
import * as os from "node:os"
import { describe, expect, it } from "vitest"
import { makeOwner, ownerGone, releaseOwner } from "../../src/runs/Owners.ts"

describe("ownerGone", () => {
  const self = makeOwner()

  it("knows a process of this host whose pid no longer runs is gone, and a running one is not", () => {
    const ended = spawnSync(process.execPath, ["-e", "0"]).pid!
    expect(ownerGone(`${os.hostname()}:${ended}:abcd1234`, self)).toBe(true)
    expect(ownerGone(`${os.hostname()}:${process.ppid}:abcd1234`, self)).toBe(false)
  })

  it("tells this process's earlier starts (the same pid, as in a restarted container) from its live servers", () => {
    expect(ownerGone(`${os.hostname()}:${process.pid}:00000000`, self)).toBe(true)
    expect(ownerGone(self, self)).toBe(false)
    const other = makeOwner()
    expect(ownerGone(other, self)).toBe(false)
    releaseOwner(other)
    expect(ownerGone(other, self)).toBe(true)
  })

  it("never claims another host's owner, or one it cannot read, is gone", () => {
    expect(ownerGone(`some-other-host:${process.pid}:abcd1234`, self)).toBe(false)
    expect(ownerGone("not an owner", self)).toBe(false)
    expect(ownerGone(`${os.hostname()}:abc:abcd1234`, self)).toBe(false)
  })
})
