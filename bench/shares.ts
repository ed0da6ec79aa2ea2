/**
 * Fair shares at the provider (issue 62, item 7), as latency: another user's `/chat` on an idle
 * server, then beside (a) one key's 300 slow completion-proxy calls and (b) one user's twenty keys
 * with 15 slow proxy calls each, as the ratio to the idle latency (the issue asks for under 2).
 * The test (test/limits/shares.test.ts) asserts the order the provider serves; this measures it.
 *
 *   npx tsx bench/shares.ts [--backend pglite|postgres] [--rounds N] [--reply-ms MS]
 *
 * One server in this process per scenario, the fake provider beside it: the patient user's chat is
 * answered after `--reply-ms`, the greedy calls after a minute (they outlast the measurement).
 * PROVIDER_CONCURRENCY_MAX is 16 (a reserve of 2), RUNS_PER_CREDENTIAL_MAX its default 16.
 */
import { createKey } from "../test/auth/helpers.ts"
import { fakeLlmEnv, startFakeLlm } from "../test/fixtures/fakeLlm.ts"
import type { Backend } from "../test/support/database.ts"
import { json, startServer, type TestServer } from "../test/support/server.ts"
import { eventually } from "../test/support/time.ts"
import { loadAverage } from "./proc.ts"

const arg = (name: string, fallback: string) => {
  const at = process.argv.indexOf(`--${name}`)
  return at >= 0 && process.argv[at + 1] ? process.argv[at + 1]! : fallback
}
const BACKEND = arg("backend", "pglite") as Backend
const ROUNDS = Number(arg("rounds", "5"))
const REPLY_MS = Number(arg("reply-ms", "100"))
const greedyModel = "fake-model-2"

const median = (values: ReadonlyArray<number>) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!

const signIn = async (server: TestServer, username: string, role: "admin" | "member") => {
  const password = `${username} user's password`
  await server.request("/api/v1/admin/users", { method: "POST", body: JSON.stringify({ username, password, role }) })
  const signedIn = await server.request("/auth/login", { method: "POST", auth: null, body: JSON.stringify({ username, password }) })
  return (await json(signedIn)).access_token as string
}

/** The greedy side of a scenario: the proxy keys, and how many calls each makes. */
type Greedy = (server: TestServer) => Promise<Array<{ key: string; calls: number }>>

const scenario = async (name: string, greedy: Greedy) => {
  const llm = await startFakeLlm({ record: true })
  llm.setDefaultReply({ text: "ok", delayMs: REPLY_MS, delayByModel: { [greedyModel]: 60_000 } })
  const server = await startServer({ backend: BACKEND, env: { ...fakeLlmEnv(llm), LOG_LEVEL: "error", PROVIDER_CONCURRENCY_MAX: "16" } })
  const controller = new AbortController()
  try {
    const patient = await signIn(server, "patient", "member")
    let session: string | undefined
    const chat = async () => {
      const started = performance.now()
      const response = await server.request("/chat", {
        method: "POST",
        auth: patient,
        body: JSON.stringify({ message: "how long", client_id: "patient", ...(session ? { session_id: session } : {}) })
      })
      if (response.status !== 200) throw new Error(`The patient chat answered ${response.status}`)
      session = (await json(response)).session_id
      return performance.now() - started
    }
    const measure = async () => {
      const times: Array<number> = []
      for (let i = 0; i < ROUNDS; i++) times.push(await chat())
      return median(times)
    }
    await chat()
    const idle = await measure()
    const keys = await greedy(server)
    const statuses: Record<number, number> = {}
    for (const { key, calls } of keys) {
      for (let i = 0; i < calls; i++) {
        void server.request("/api/v1/llm/completions", {
          method: "POST",
          auth: key,
          body: JSON.stringify({ model: greedyModel, messages: [{ role: "user", content: "greedy" }] }),
          signal: controller.signal
        }).then((response) => void (statuses[response.status] = (statuses[response.status] ?? 0) + 1)).catch(() => undefined)
      }
    }
    const atProvider = () => llm.requestsTo("/v1/chat/completions").filter((r) => r.body.model === greedyModel).length
    await eventually(() => atProvider() >= 14, "the greedy calls to take their share", 60_000)
    const beside = await measure()
    console.log(
      `| ${name} | ${idle.toFixed(1)} | ${beside.toFixed(1)} | ${(beside / idle).toFixed(2)} | ${atProvider()} | ${
        JSON.stringify(statuses)
      } |`
    )
  } finally {
    controller.abort()
    await server.close()
    await llm.close()
  }
}

const main = async () => {
  console.log(`backend ${BACKEND}, median of ${ROUNDS} chats each, patient reply ${REPLY_MS} ms, load average ${loadAverage()}`)
  console.log("| greedy side | idle ms | beside ms | ratio | greedy calls at the provider | greedy answers so far |")
  console.log("|---|---|---|---|---|---|")
  await scenario("one key, 300 proxy calls", async (server) => [{ key: (await createKey(server, ["llm:completions"])).key, calls: 300 }])
  await scenario("one user's 20 keys, 15 proxy calls each", async (server) => {
    const admin = await signIn(server, "greedy", "admin")
    return Promise.all(Array.from({ length: 20 }, async (_, i) => {
      const created = await server.request("/api/v1/admin/api-keys", {
        method: "POST",
        auth: admin,
        body: JSON.stringify({ name: `greedy ${i}`, scopes: ["llm:completions"] })
      })
      return { key: (await json(created)).key as string, calls: 15 }
    }))
  })
}

await main()
