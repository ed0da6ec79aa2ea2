/**
 * The peers a load benchmark runs beside Cairn, each as a child process of its own so that its
 * CPU is neither the client's nor the server's: the fake LLM (`test/fixtures/fakeLlmMain.ts`) and
 * the round-robin proxy of the replica tests (`bench/proxyMain.ts`).
 */
import { type ChildProcess, spawn } from "node:child_process"
import * as path from "node:path"
import { freePort } from "../test/support/server.ts"

const root = path.resolve(import.meta.dirname, "..")

export interface Child {
  readonly child: ChildProcess
  readonly url: string
}

/** Runs a TypeScript entry through tsx and waits for it to print "listening on <url>". */
const start = (entry: string, env: Record<string, string>): Promise<Child> => {
  const child = spawn(process.execPath, ["--import", "tsx", path.join(root, entry)], {
    cwd: root,
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "inherit"]
  })
  return new Promise((resolve, reject) => {
    child.stdout!.on("data", (chunk: Buffer) => {
      const url = /listening on (http:\/\/[\d.:]+)/.exec(chunk.toString())?.[1]
      if (url !== undefined) resolve({ child, url })
    })
    child.on("exit", (code) => reject(new Error(`${entry} exited with ${code}`)))
  })
}

export const startFakeLlmProcess = async (
  options: { readonly delayMs: string; readonly reply: string; readonly apiKey: string; readonly chunkDelayMs?: string }
) => {
  const port = await freePort()
  return start(
    "test/fixtures/fakeLlmMain.ts",
    {
      FAKE_LLM_PORT: String(port),
      FAKE_LLM_API_KEY: options.apiKey,
      FAKE_LLM_DELAY_MS: options.delayMs,
      FAKE_LLM_REPLY: options.reply,
      FAKE_LLM_CHUNK_DELAY_MS: options.chunkDelayMs ?? ""
    }
  )
}

export const startProxyProcess = (upstreams: ReadonlyArray<string>) => start("bench/proxyMain.ts", { PROXY_UPSTREAMS: upstreams.join(",") })
