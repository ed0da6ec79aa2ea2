/**
 * The fast tier (`npm run test:fast`): every test file that starts nothing heavy (a server, a
 * browser, a terminal, a mail server, a database, the word vectors), found by following each
 * file's imports inside test/. Domain logic, the tool contract, the house's own rules and the
 * protocol units run here in under a minute; the full suite (`vitest.config.ts`) runs these and
 * the rest.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { defineConfig } from "vitest/config"
import full from "./vitest.config.ts"

/** What starts something heavy: a test file reaching one of these (through test/ files) is not fast. */
const heavy = new Set([
  ...[
    "test/support/server.ts",
    "test/support/browser.ts",
    "test/support/terminal.ts",
    "test/support/integrations.ts",
    "test/support/database.ts",
    "test/fixtures/dovecot.ts",
    "src/main.ts",
    "src/db/Database.ts",
    "src/db/PgliteClient.ts",
    "src/embeddings/Glove.ts"
  ].map((file) => path.resolve(file)),
  "@electric-sql/pglite"
])

/** A file's imports: relative ones resolved, packages by name. */
const importsOf = (file: string): Array<string> =>
  [...fs.readFileSync(file, "utf8").matchAll(/(?:from|import)\s*\(?\s*["']([^"']+)["']/g)].map(({ 1: specifier }) =>
    specifier!.startsWith(".") ? path.resolve(path.dirname(file), specifier!) : specifier!
  )

/** Followed through test/ only: what src/ imports is the code under test, not its harness. */
const reachesHeavy = (file: string, seen = new Set<string>()): boolean => {
  if (heavy.has(file)) return true
  if (seen.has(file) || !file.startsWith(path.resolve("test")) || !fs.existsSync(file)) return false
  seen.add(file)
  return importsOf(file).some((next) => reachesHeavy(next, seen))
}

const testFiles = (dir: string): Array<string> =>
  fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name)
    return entry.isDirectory() ? testFiles(full) : entry.name.endsWith(".test.ts") ? [full] : []
  })

export const fastTestFiles = () =>
  testFiles(path.resolve("test"))
    .filter((file) => !reachesHeavy(file))
    .map((file) => path.relative(process.cwd(), file))

// Not mergeConfig: it would add these to the full suite's include, not replace it.
// No global setup: the fast tier makes no database, so it needs no migrated template.
export default defineConfig({ ...full, test: { ...full.test, include: fastTestFiles(), globalSetup: [] } })
