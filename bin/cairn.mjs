#!/usr/bin/env node
// The `cairn` command. Runs the compiled server in dist/server/ (built by `npm install` or `npm run build`)
// while it is current, so the process holds no TypeScript loader; otherwise, after an edit without a
// build or with CAIRN_FROM_SOURCE=1, runs the TypeScript through tsx as before. `--help` and
// `--version` are answered from the help the build saved, before Effect or the client load.
import * as fs from "node:fs"
import * as path from "node:path"
import { pathToFileURL } from "node:url"
import { distIsFresh, holdCurrentBuild } from "./dist.mjs"

if (process.env.CAIRN_FROM_SOURCE !== "1" && distIsFresh()) {
  const build = holdCurrentBuild()
  const load = (file) => import(pathToFileURL(path.join(build, file)).href)
  const { answerHelp, helpRequest, stdoutRendering } = await load("src/cli/Help.js")
  const argv = process.argv.slice(2)
  const saved = path.join(build, "help.json")
  if (helpRequest(argv) !== undefined && fs.existsSync(saved)) {
    process.exitCode = answerHelp(JSON.parse(fs.readFileSync(saved, "utf8")), argv, {
      ...stdoutRendering(),
      out: (text) => process.stdout.write(text),
      err: (text) => process.stderr.write(text)
    })
  } else await load("src/cli.js")
} else {
  const { register } = await import("tsx/esm/api")
  register()
  await import("../src/cli.ts")
}
