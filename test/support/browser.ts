/**
 * A real headless Chromium (Debian's `chromium`, driven by playwright-core) for the web app's
 * end-to-end tests, and the built app they run against.
 *
 * The app is built by `npm install` (the `prepare` step); `ensureWebBuilt` builds it again when a
 * source under `src/` is newer than the build, so a test never runs against a stale bundle.
 */
import { execFileSync } from "node:child_process"
import { existsSync, readdirSync, statSync } from "node:fs"
import * as path from "node:path"
import { type Browser, chromium, type LaunchOptions } from "playwright-core"
import { webDistDir } from "../../src/http/WebApp.ts"

const root = path.resolve(import.meta.dirname, "../..")
export const chromiumPath = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium"

const newestSource = (dir: string): number => {
  let newest = 0
  for (const name of readdirSync(dir)) {
    const full = path.join(dir, name)
    const stat = statSync(full)
    newest = Math.max(newest, stat.isDirectory() ? newestSource(full) : stat.mtimeMs)
  }
  return newest
}

/** Builds the web app unless the build is newer than every source it bundles. */
export const ensureWebBuilt = () => {
  const index = path.join(webDistDir, "index.html")
  if (existsSync(index) && statSync(index).mtimeMs >= newestSource(path.join(root, "src"))) return
  // NODE_ENV as npm install has it: under vitest it is "test", which would bundle React's development build.
  execFileSync("npx", ["vite", "build", "--config", "src/web/vite.config.ts", "--logLevel", "warn"], {
    cwd: root,
    stdio: "inherit",
    env: { ...process.env, NODE_ENV: "production" }
  })
}

/**
 * Chromium as this machine runs it: headless, as root without the sandbox, and with the background
 * services off (the network is closed; they would only fail). A missing browser fails the test.
 */
export const launchBrowser = (options: { readonly args?: ReadonlyArray<string> } & Omit<LaunchOptions, "args"> = {}): Promise<Browser> => {
  if (!existsSync(chromiumPath)) throw new Error(`Chromium is missing at ${chromiumPath}: apt-get install chromium (CI's .ci/run does)`)
  const { args = [], ...rest } = options
  return chromium.launch({
    executablePath: chromiumPath,
    headless: true,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      ...args
    ],
    ...rest
  })
}
