/**
 * Effect runtime steps a chat turn takes, and the code that makes them. A count, not a time: it
 * does not move with the machine's other work, so a change to the turn's path shows in it where the
 * CPU figures of `bench/turns.ts` drift by 10 % between runs.
 *
 *   npx tsx bench/steps.ts [--backend postgres|pglite] [--mode blocking|streaming] [--turns 300]
 *                          [--concurrency 5] [--top 25] [--before <checkout>]
 *
 * Each server runs under `bench/steps/hook.mjs`, which counts every step of Effect's run loop by
 * the site that made the effect it runs (see there). After 100 turns to warm up, the tally starts
 * again, `--turns` turns run, and the tally is read: steps per turn in all, by kind of step, and by
 * site (Cairn's own code where a site has it, as a line of `src/`: the servers run from source, since
 * the compiled build is one bundle in which Effect's frames and Cairn's cannot be told apart; the
 * platform's or @effect/sql's otherwise; `bin/cairn.mjs` for effects made once at start). The
 * counting itself makes the server many times slower: read the counts, not the times.
 */
import * as fs from "node:fs"
import * as http from "node:http"
import * as os from "node:os"
import * as path from "node:path"
import { type Backend, createTestDatabase } from "../test/support/database.ts"
import { waitFor } from "../test/support/integrations.ts"
import { API_KEY, spawnServer } from "../test/support/server.ts"
import { startFakeLlmProcess } from "./children.ts"

const arg = (name: string, fallback: string) => {
  const at = process.argv.indexOf(`--${name}`)
  return at >= 0 && process.argv[at + 1] ? process.argv[at + 1]! : fallback
}
const BACKEND = arg("backend", "postgres") as Backend
const MODE = arg("mode", "blocking")
const TURNS = Number(arg("turns", "300"))
const CONCURRENCY = Number(arg("concurrency", "5"))
const TOP = Number(arg("top", "25"))
const BEFORE = arg("before", "")
const WARMUP_TURNS = 100
const PROVIDER_KEY = "sk-bench-provider-key-0123456789"
const hook = path.join(import.meta.dirname, "steps", "hook.mjs")

const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY })
const post = (url: string, body: string) =>
  new Promise<void>((resolve, reject) => {
    const request = http.request(url, {
      method: "POST",
      agent,
      headers: { "content-type": "application/json", authorization: `Bearer ${API_KEY}` }
    }, (response) => {
      let text = ""
      response.setEncoding("utf8")
      response.on("data", (chunk: string) => (text += chunk))
      response.on(
        "end",
        () => (response.statusCode === 200 ? resolve() : reject(new Error(`${response.statusCode} ${text.slice(0, 200)}`)))
      )
    })
    request.on("error", reject)
    request.end(body)
  })

interface Tally {
  readonly total: number
  readonly rows: ReadonlyArray<{ readonly count: number; readonly op: string; readonly site: string }>
}

/** One server: warm up, start the tally again, run the turns, read the tally. */
const measure = async (label: string, root: string | undefined, llmUrl: string): Promise<Tally> => {
  const db = await createTestDatabase(BACKEND)
  const out = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "cairn-steps-")), "tally")
  const server = await spawnServer(
    db,
    {
      OPENAI_BASE_URL: `${llmUrl}/v1`,
      OPENAI_API_KEY: PROVIDER_KEY,
      DEFAULT_MODEL: "fake-model",
      LOG_LEVEL: "warning",
      RUNS_PER_CREDENTIAL_MAX: String(Math.max(16, CONCURRENCY)),
      STEPS_OUT: out,
      CAIRN_FROM_SOURCE: "1"
    },
    ["--import", hook],
    root
  )
  const endpoint = `${server.baseUrl}${MODE === "streaming" ? "/chat/stream" : "/chat"}`
  const turns = async (count: number) => {
    let next = 0
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async (_, client) => {
        while (next < count) {
          const n = next++
          await post(endpoint, JSON.stringify({ message: `turn ${n}`, client_id: `steps-${label}-${client}` }))
        }
      })
    )
  }
  const read = async (dump: number) => {
    process.kill(server.process.pid!, "SIGUSR2")
    const file = `${out}.${dump}`
    await waitFor(() => (fs.existsSync(file) ? true : undefined), `the tally from ${label}`, 30_000)
    return fs.readFileSync(file, "utf8")
  }
  try {
    await turns(WARMUP_TURNS)
    // Let the warm-up's background writes settle before the tally starts again.
    await new Promise((resolve) => setTimeout(resolve, 500))
    await read(0)
    await turns(TURNS)
    await new Promise((resolve) => setTimeout(resolve, 500))
    const [head, ...lines] = (await read(1)).split("\n")
    return {
      total: Number(head!.split("\t")[1]),
      rows: lines.map((line) => {
        const [count, op, site] = line.split("\t")
        return { count: Number(count), op: op!, site: site ?? "" }
      })
    }
  } finally {
    await server.stop()
    await db.drop()
  }
}

/** A site by Cairn's code where it has a frame there (`other < cairn`), else as it is. */
const cairnSite = (site: string) => (site.includes(" < ") ? site.slice(site.indexOf(" < ") + 3) : site) || "(a value: no site)"

const grouped = (tally: Tally, key: (row: Tally["rows"][number]) => string) => {
  const sums = new Map<string, number>()
  for (const row of tally.rows) sums.set(key(row), (sums.get(key(row)) ?? 0) + row.count)
  return [...sums.entries()].sort((a, b) => b[1] - a[1])
}

const perTurn = (count: number) => (count / TURNS).toFixed(1)

const llm = await startFakeLlmProcess({ delayMs: "50", reply: "The quick brown fox jumps over the lazy dog.", apiKey: PROVIDER_KEY })
try {
  const versions: Array<{ label: string; root: string | undefined }> = [
    ...(BEFORE ? [{ label: "before", root: path.resolve(BEFORE) }] : []),
    { label: "this checkout", root: undefined }
  ]
  console.log(`backend=${BACKEND} mode=${MODE} turns=${TURNS} concurrency=${CONCURRENCY} node=${process.version}`)
  const tallies: Array<Tally> = []
  for (const version of versions) {
    const tally = await measure(version.label.replace(/ /g, "-"), version.root, llm.url)
    tallies.push(tally)
    console.log(`\n## ${version.label}: ${perTurn(tally.total)} steps a turn`)
    console.log("\nby kind of step:")
    for (const [op, count] of grouped(tally, (row) => row.op).slice(0, 10)) console.log(`${perTurn(count).padStart(8)}  ${op}`)
    console.log("\nby site:")
    for (const [site, count] of grouped(tally, (row) => cairnSite(row.site)).slice(0, TOP)) {
      console.log(`${perTurn(count).padStart(8)}  ${site}`)
    }
  }
  if (tallies.length === 2) {
    console.log(
      `\nsteps a turn: before ${perTurn(tallies[0]!.total)}, after ${perTurn(tallies[1]!.total)} (${
        ((tallies[1]!.total / tallies[0]!.total - 1) * 100).toFixed(1)
      } %)`
    )
  }
} finally {
  llm.child.kill()
}
process.exit(0)
