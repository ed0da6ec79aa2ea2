/**
 * The cost of the budget check per call (issue 62): the same chat completion through Cairn's
 * `/api/v1/llm/completions`, made by a key no budget applies to (the check is a look at the cached
 * definitions) and by a key with a budget of its own (its worst case reserved in one statement
 * before the call and settled in one after), interleaved in one run, on one server in this process
 * with the fake provider beside it.
 *
 *   npx tsx bench/budgetCheck.ts [--calls N] [--backend pglite|postgres]
 *
 * Reports median and p90 latency of each path and their ratio. The budget's limit is far above
 * what the run spends, so no call is refused.
 */
import { createKey } from "../test/auth/helpers.ts"
import { fakeLlmEnv, startFakeLlm } from "../test/fixtures/fakeLlm.ts"
import type { Backend } from "../test/support/database.ts"
import { startServer } from "../test/support/server.ts"
import { loadAverage } from "./proc.ts"

const arg = (name: string, fallback: string) => {
  const at = process.argv.indexOf(`--${name}`)
  return at >= 0 && process.argv[at + 1] ? process.argv[at + 1]! : fallback
}
const CALLS = Number(arg("calls", "2000"))
const BACKEND = arg("backend", "pglite") as Backend
const WARMUP = 200

const quantile = (values: ReadonlyArray<number>, q: number) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!
}

const main = async () => {
  const llm = await startFakeLlm({
    record: false,
    defaultReply: { text: "hello", usage: { prompt_tokens: 12, completion_tokens: 3, total_tokens: 15 } }
  })
  const server = await startServer({ backend: BACKEND, env: { ...fakeLlmEnv(llm), LOG_LEVEL: "error" } })
  try {
    const plain = await createKey(server, ["llm:completions"])
    const budgeted = await createKey(server, ["llm:completions"])
    await server.call((client) =>
      client.budgets.create({
        payload: { scope: "key", target: budgeted.id, period: "day", limit_usd: null, limit_tokens: 1e12, action: "block", warn_at: 0.8 }
      })
    )
    const body = JSON.stringify({
      messages: [{ role: "system", content: "You are a terse assistant." }, { role: "user", content: "Say hello in five words." }],
      max_tokens: 64
    })
    const call = async (token: string) => {
      const started = performance.now()
      const response = await server.request("/api/v1/llm/completions", { method: "POST", auth: token, body })
      await response.arrayBuffer()
      if (response.status !== 200) throw new Error(`A call answered ${response.status}`)
      return performance.now() - started
    }
    const times = { plain: [] as Array<number>, budgeted: [] as Array<number> }
    for (let i = 0; i < WARMUP + CALLS; i++) {
      // Interleaved, alternating which goes first, so drift on the machine falls on both alike.
      const order = i % 2 === 0 ? (["plain", "budgeted"] as const) : (["budgeted", "plain"] as const)
      for (const path of order) {
        const ms = await call(path === "plain" ? plain.key : budgeted.key)
        if (i >= WARMUP) times[path].push(ms)
      }
    }
    const status = await server.call((client) => client.budgets.list())
    const row = (name: string, values: ReadonlyArray<number>) =>
      `| ${name} | ${quantile(values, 0.5).toFixed(3)} | ${quantile(values, 0.9).toFixed(3)} |`
    const ratio = quantile(times.budgeted, 0.5) / quantile(times.plain, 0.5)
    console.log(`backend ${BACKEND}, ${CALLS} calls per path after ${WARMUP} warm-up, load average ${loadAverage()}`)
    console.log("| path | median ms | p90 ms |\n|---|---|---|")
    console.log(row("no budget applies", times.plain))
    console.log(row("a budget applies (reserve + settle)", times.budgeted))
    console.log(
      `median ratio ${ratio.toFixed(3)}; added ${
        (quantile(times.budgeted, 0.5) - quantile(times.plain, 0.5)).toFixed(3)
      } ms; budget spent ${status[0]?.spent_tokens} tokens in ${(WARMUP + CALLS)} calls, ${status[0]?.in_flight} in flight`
    )
  } finally {
    await server.close()
    await llm.close()
  }
}

await main()
