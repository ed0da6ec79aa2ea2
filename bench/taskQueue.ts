/**
 * Task queue throughput: tasks per second drained by real `cairn serve` processes with a
 * zero-latency fake LLM, on PGlite (one process) and PostgreSQL (one and two processes). Baseline,
 * in the same run and on the same single server: the same number of agent turns through blocking
 * `POST /chat` from as many concurrent clients as the worker has slots (TASK_CONCURRENCY), so the
 * ratio is what the queue costs or gains over running the turns directly.
 *
 *   npx tsx bench/taskQueue.ts [tasks=200] [concurrency=4] [pollMs=250]
 *
 * Throughput is measured from the tasks' own timestamps: tasks / (last completed_at - first
 * created_at), so the bench's polling does not enter the figure.
 */
import * as os from "node:os"
import { startFakeLlm } from "../test/fixtures/fakeLlm.ts"
import { type Backend, createTestDatabase } from "../test/support/database.ts"
import { type ChildServer, spawnServer } from "../test/support/server.ts"

const count = Number(process.argv[2] ?? 200)
const concurrency = Number(process.argv[3] ?? 4)
const pollMs = Number(process.argv[4] ?? 250)

const llm = await startFakeLlm({ record: false })
llm.setDefaultReply({ text: "done" })
const env = {
  OPENAI_BASE_URL: llm.url,
  OPENAI_API_KEY: "sk-bench",
  DEFAULT_MODEL: "fake-model",
  LOG_LEVEL: "error",
  TASK_CONCURRENCY: String(concurrency),
  TASK_POLL_MS: String(pollMs)
}

const json = async (response: Response): Promise<any> => {
  if (!response.ok) throw new Error(`${response.url} answered ${response.status}: ${await response.text()}`)
  return response.json()
}

const sessions = async (server: ChildServer, prefix: string, n: number) => {
  const ids: Array<string> = []
  for (let start = 0; start < n; start += 20) {
    const batch = await Promise.all(
      Array.from({ length: Math.min(20, n - start) }, (_, i) =>
        server
          .request("/api/v1/sessions", { method: "POST", body: JSON.stringify({ client_id: `${prefix}-${start + i}` }) })
          .then(json)
          .then((body) => body.session_id as string))
    )
    ids.push(...batch)
  }
  return ids
}

/** Enqueues one task per session through the servers in turn, then waits for all; tasks/s. */
const queueRun = async (servers: ReadonlyArray<ChildServer>, label: string) => {
  const ids = await sessions(servers[0]!, label, count)
  const taskIds: Array<string> = []
  for (let start = 0; start < count; start += 20) {
    const batch = await Promise.all(
      ids.slice(start, start + 20).map((id, i) =>
        servers[(start + i) % servers.length]!
          .request(`/api/v1/sessions/${id}/messages`, {
            method: "POST",
            body: JSON.stringify({ content: `task ${start + i}`, source: "bench", run_agent: true, notify: false })
          })
          .then(json)
          .then((body) => body.task_id as string)
      )
    )
    taskIds.push(...batch)
  }
  const wanted = new Set(taskIds)
  for (;;) {
    const list: Array<{ id: string; status: string; created_at: string; completed_at: string | null }> = await json(
      await servers[0]!.request("/api/v1/tasks?limit=500")
    )
    const mine = list.filter((task) => wanted.has(task.id))
    if (mine.some((task) => task.status === "failed")) throw new Error("a task failed")
    if (mine.length === count && mine.every((task) => task.status === "complete")) {
      const first = Math.min(...mine.map((task) => Date.parse(task.created_at)))
      const last = Math.max(...mine.map((task) => Date.parse(task.completed_at!)))
      return count / ((last - first) / 1000)
    }
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
}

/** The same turns through blocking /chat, `concurrency` clients at a time; turns/s. */
const chatRun = async (server: ChildServer, label: string) => {
  let next = 0
  const started = performance.now()
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) {
        const n = next++
        await json(
          await server.request("/chat", { method: "POST", body: JSON.stringify({ message: `turn ${n}`, client_id: `${label}-${n}` }) })
        )
      }
    })
  )
  return count / ((performance.now() - started) / 1000)
}

const rows: Array<string> = []
const measure = async (backend: Backend, processes: number) => {
  const db = await createTestDatabase(backend)
  const servers: Array<ChildServer> = []
  try {
    for (let i = 0; i < processes; i++) servers.push(await spawnServer(db, env))
    // Warm-up: JIT, connections, the fake LLM.
    await queueRun(servers, "warm-q").catch(() => 0)
    const load = os.loadavg()[0]!.toFixed(1)
    const baseline = await chatRun(servers[0]!, "chat")
    const queue = await queueRun(servers, "queue")
    const baseline2 = await chatRun(servers[0]!, "chat2")
    const chat = (baseline + baseline2) / 2
    const row = `| ${backend} | ${processes} | ${queue.toFixed(1)} | ${chat.toFixed(1)} | ${(queue / chat).toFixed(2)}x | ${load} |`
    rows.push(row)
    console.log(row)
  } finally {
    for (const server of servers) await server.stop("SIGTERM")
    await db.drop()
  }
}

console.log(`${count} tasks, TASK_CONCURRENCY=${concurrency}, TASK_POLL_MS=${pollMs}, ${os.cpus().length} CPUs`)
console.log("| backend | server processes | queue tasks/s | baseline /chat turns/s (1 process) | ratio | load avg (1 min) |")
console.log("|---|---|---|---|---|---|")
await measure("pglite", 1)
await measure("postgres", 1)
await measure("postgres", 2)
await llm.close()
process.exit(0)
