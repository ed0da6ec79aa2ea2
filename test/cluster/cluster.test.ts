/**
 * Cairn on several hosts (issue 61): three Cairn hosts, PostgreSQL with a synchronous replica,
 * PgBouncer in transaction mode and HAProxy checking `/health/ready`, each in a network namespace
 * of its own (Netns.ts, Cluster.ts). Under steady mixed traffic through the balancer: 200 ms of
 * latency to PostgreSQL, a Cairn host partitioned from PostgreSQL for 30 s, and a `kill -9` of a
 * Cairn host running a turn. For each the chaos table says: requests failed, acknowledged
 * messages lost (must be 0), tasks run twice (must be 0), streams cut and rejoined through
 * another host, and the time until the cluster served again (printed; figures, not assertions).
 *
 * Needs root (namespaces, nftables), as CI has, and the Debian packages .ci/run installs.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type FakeLlm, fakeLlmEnv, startFakeLlm } from "../fixtures/fakeLlm.ts"
import { scaled, sleep } from "../support/time.ts"
import { type Cluster, relayToLoopback, startCluster, stopCluster } from "./Cluster.ts"
import { heal, makeSwitch, partition, teardown, testAddress } from "./Netns.ts"
import { audit, call, startProbe, startTraffic, type Tally } from "./Traffic.ts"

interface Row {
  readonly scenario: string
  readonly requests: number
  readonly failed: number
  readonly lost: number
  readonly twice: number
  readonly unfinished: number
  readonly streamsCut: number
  readonly streamsRejoined: number
  readonly servesAgainMs: number
  readonly note: string
}

describe("several hosts in network namespaces, under faults", () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "cairn-cluster-"))
  let llm: FakeLlm
  let relay: Awaited<ReturnType<typeof relayToLoopback>>
  let cluster: Cluster
  const table: Array<Row> = []

  beforeAll(async () => {
    // The PostgreSQL hosts run as the postgres user, which must reach its folders under this one.
    fs.chmodSync(dir, 0o755)
    makeSwitch()
    llm = await startFakeLlm({ record: false, defaultReply: { text: "fine thanks, and you there", chunkDelayMs: 100 } })
    relay = await relayToLoopback(llm.port)
    const { port } = relay
    cluster = await startCluster(dir, {
      ...fakeLlmEnv({ url: `http://${testAddress}:${port}/v1` }),
      LOG_LEVEL: "warning",
      TASK_CONCURRENCY: "2",
      TASK_LEASE_SECONDS: "10",
      LEADER_RETRY_MS: "500",
      LEADER_CHECK_MS: "1000",
      DRAIN_DELAY_MS: "1000",
      LLM_MAX_RETRIES: "1"
    })
  }, scaled(420_000))

  afterAll(async () => {
    if (table.length > 0) {
      console.log("\nChaos table (issue 61, item 7):")
      console.table(table)
    }
    await stopCluster(cluster, dir)
    teardown()
    await relay?.close()
    await llm?.close()
    fs.rmSync(dir, { recursive: true, force: true })
  })

  /** Traffic for `before` ms, the fault, traffic for the fault's time, the repair, then the audit. */
  const scenario = async (
    name: string,
    fault: () => Promise<string> | string,
    repair: () => Promise<void> | void,
    holdMs: number
  ): Promise<Row> => {
    const traffic = startTraffic(cluster.baseUrl, name)
    await sleep(2000)
    const since = Date.now()
    const note = await fault()
    const probe = startProbe(cluster.baseUrl, name, since)
    await sleep(holdMs)
    await repair()
    await sleep(2000)
    const tally: Tally = await traffic.stop()
    const servesAgainMs = await probe.stop()
    const checked = await audit(cluster.baseUrl, tally.acks, scaled(90_000))
    const row: Row = {
      scenario: name,
      requests: tally.requests,
      failed: tally.failed,
      lost: checked.lost,
      twice: checked.twice,
      unfinished: checked.unfinished,
      streamsCut: tally.streamsCut,
      streamsRejoined: tally.streamsRejoined,
      servesAgainMs,
      note
    }
    table.push(row)
    if (tally.failures.length > 0) console.log(`${name}: failed requests`, tally.failures)
    return row
  }

  const holds = (row: Row) => {
    expect(row.requests).toBeGreaterThan(10)
    expect(row.lost).toBe(0)
    expect(row.twice).toBe(0)
    expect(row.unfinished).toBe(0)
    expect(row.streamsRejoined).toBe(row.streamsCut)
  }

  it("serves through the balancer from every host, with the pool through PgBouncer and LISTEN around it", async () => {
    const answered = await Promise.all(Array.from({ length: 6 }, () => call(cluster.baseUrl, "/health/ready").then((r) => r.status)))
    expect(answered.every((status) => status === 200)).toBe(true)
    const connections = cluster.sql("SELECT application_name || '@' || coalesce(host(client_addr), 'local') FROM pg_stat_activity")
    // The bus listens straight from each host; the pool comes through PgBouncer (local to PostgreSQL).
    for (const host of cluster.cairns) expect(connections).toMatch(new RegExp(`cairn-bus:\\S+@${host.host.address.replaceAll(".", "\\.")}`))
    expect(connections).toContain("cairn@127.0.0.1")
    expect(cluster.sql("SELECT sync_state FROM pg_stat_replication").trim()).toBe("sync")
  }, scaled(60_000))

  it("200 ms of latency to PostgreSQL: slower, nothing lost", async () => {
    const row = await scenario(
      "latency 200 ms to PostgreSQL",
      () => {
        cluster.poolRelay.setDelay(200)
        return "every Cairn host's pool, 15 s (a relay: no sch_netem in this kernel)"
      },
      () => cluster.poolRelay.setDelay(0),
      15_000
    )
    holds(row)
  }, scaled(240_000))

  it("a Cairn host partitioned from PostgreSQL for 30 s: the balancer leaves it, nothing lost", async () => {
    const victim = cluster.cairns[0]!
    const row = await scenario(
      "host partitioned from PostgreSQL 30 s",
      async () => {
        partition(victim.host, cluster.primary.address, { address: testAddress, port: cluster.poolRelay.port })
        return `host ${victim.host.name}`
      },
      async () => {
        heal(victim.host)
        const deadline = Date.now() + scaled(60_000)
        while (Date.now() < deadline) {
          const ready = await fetch(`http://${victim.host.address}:8000/health/ready`).then((r) => r.ok).catch(() => false)
          if (ready) return
          await sleep(250)
        }
        throw new Error(`host ${victim.host.name} not ready again after the partition healed`)
      },
      30_000
    )
    holds(row)
  }, scaled(300_000))

  it("kill -9 of a Cairn host running a turn: the others serve, its session answers again", async () => {
    const victim = cluster.cairns[1]!
    let heldSession = ""
    let heldAnswersMs = -1
    let killedAt = 0
    const row = await scenario(
      "kill -9 of a Cairn host",
      async () => {
        // A session whose turn runs on the victim as it dies.
        const deadline = Date.now() + scaled(30_000)
        while (heldSession === "" && Date.now() < deadline) {
          heldSession = cluster.sql(
            `SELECT session_id FROM runs WHERE status = 'running' AND owner LIKE '%:${victim.process.pid}:%' LIMIT 1`
          ).trim()
          if (heldSession === "") await sleep(50)
        }
        killedAt = Date.now()
        victim.process.kill("SIGKILL")
        return `host ${victim.host.name}`
      },
      async () => {
        // The held session's next message, until it is answered (its dead holder's lock released).
        const deadline = Date.now() + scaled(90_000)
        while (heldSession !== "" && Date.now() < deadline) {
          const body = JSON.stringify({ message: "are you back", session_id: heldSession, if_busy: "reject" })
          const ok = await call(cluster.baseUrl, "/chat", { method: "POST", body }).then((r) => r.ok).catch(() => false)
          if (ok) {
            heldAnswersMs = Date.now() - killedAt
            return
          }
          await sleep(250)
        }
      },
      3_000
    )
    holds(row)
    expect(heldSession).not.toBe("")
    expect(heldAnswersMs).toBeGreaterThanOrEqual(0)
    table[table.length - 1] = { ...row, note: `${row.note}; its held session answered after ${heldAnswersMs} ms` }
  }, scaled(300_000))
})
