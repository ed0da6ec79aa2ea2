/**
 * Where tests make their folders (`tempDir`): the data directories of test databases and servers,
 * the PGlite template, and the folders a test writes itself. A folder in memory (/dev/shm) when the
 * machine has one with room, else the system's temporary folder; TEST_TMPDIR names another. Each
 * PGlite test database is a copy of the migrated template (1,233 files, 41 MB) removed at the end:
 * on disk that copy and removal took 0.5–1.2 s of a test's time under the suite's load, in memory
 * about 0.1 s (bench/testDatabase.ts).
 */
import * as fs from "node:fs"
import * as os from "node:os"

const memoryFolder = "/dev/shm"
/** Enough for the PGlite databases two workers hold at once, with a wide margin. */
const roomNeeded = 2 * 1024 ** 3

const hasRoom = (folder: string): boolean => {
  try {
    fs.accessSync(folder, fs.constants.W_OK)
    const stats = fs.statfsSync(folder)
    return stats.bavail * stats.bsize >= roomNeeded
  } catch {
    return false
  }
}

export const scratchRoot: string = process.env.TEST_TMPDIR ?? (hasRoom(memoryFolder) ? memoryFolder : os.tmpdir())
