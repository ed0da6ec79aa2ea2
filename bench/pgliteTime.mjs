/**
 * Where a PGlite server's database time goes, by statement: loaded into the server with
 * `--import`, it wraps `PGlite.execProtocolRawSync` (every synchronous call into PGlite's
 * WebAssembly) and sums the time of each call under the text of the prepared statement it runs
 * (from the Parse that prepared it; other calls under their message type). A time measured inside
 * the process that runs it, so it drifts with the machine less than CPU per turn; read it per turn.
 *
 *   npx tsx bench/turns.ts --backends pglite --modes blocking --direct no --rounds 1 \
 *     --node-args "--import $PWD/bench/pgliteTime.mjs" [--before <checkout>]
 *   npx tsx bench/pgliteTimeReport.ts <the files it wrote> --turns <warm-up + turns>
 *
 * Each server process writes `pglite-time.<pid>.json` to `PGLITE_TIME_DIR` (the system's temporary
 * directory by default) every second and at exit.
 */
import { PGlite } from "@electric-sql/pglite"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

const out = path.join(process.env.PGLITE_TIME_DIR ?? os.tmpdir(), `pglite-time.${process.pid}.json`)
const texts = new Map()
const spent = new Map()
const decoder = new TextDecoder()
/** A NUL-terminated string at `at`, and where the next field starts. */
const cString = (bytes, at) => {
  let end = at
  while (bytes[end] !== 0) end++
  return [decoder.decode(bytes.subarray(at, end)), end + 1]
}
// Front-end messages: a type byte, a 32-bit length, then the fields.
const keyOf = (bytes) => {
  const type = String.fromCharCode(bytes[0])
  if (type === "P") {
    const [name, next] = cString(bytes, 5)
    texts.set(name, cString(bytes, next)[0].replace(/\s+/g, " ").slice(0, 100))
    return "(prepare)"
  }
  // Bind: the portal's name, then the statement's.
  if (type === "B") return texts.get(cString(bytes, cString(bytes, 5)[1])[0]) ?? "(unnamed statement)"
  return `(message ${type})`
}
const original = PGlite.prototype.execProtocolRawSync
PGlite.prototype.execProtocolRawSync = function(message, ...rest) {
  const key = keyOf(message)
  const started = process.hrtime.bigint()
  try {
    return original.call(this, message, ...rest)
  } finally {
    const entry = spent.get(key) ?? { ns: 0n, calls: 0 }
    entry.ns += process.hrtime.bigint() - started
    entry.calls++
    spent.set(key, entry)
  }
}
const write = () =>
  fs.writeFileSync(out, JSON.stringify([...spent].map(([statement, { ns, calls }]) => ({ statement, ms: Number(ns) / 1e6, calls }))))
setInterval(write, 1000).unref()
process.on("exit", write)
