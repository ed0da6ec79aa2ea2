#!/usr/bin/env node
// The `cairn` command. Runs the compiled server in dist/server/ (built by `npm install` or `npm run build`)
// while it is current, so the process holds no TypeScript loader; otherwise, after an edit without a
// build or with CAIRN_FROM_SOURCE=1, runs the TypeScript through tsx as before.
import { distIsFresh } from "./dist.mjs"

if (process.env.CAIRN_FROM_SOURCE !== "1" && distIsFresh()) {
  await import("../dist/server/src/cli.js")
} else {
  const { register } = await import("tsx/esm/api")
  register()
  await import("../src/cli.ts")
}
