/**
 * Cairn on several hosts (issue 61): three Cairn hosts, PostgreSQL with a synchronous replica,
 * PgBouncer in transaction mode and HAProxy checking `/health/ready`, each in a network namespace
 * of its own (Netns.ts, Cluster.ts). Under steady mixed traffic through the balancer: 200 ms of
 * latency to PostgreSQL, a Cairn host partitioned from PostgreSQL for 30 s, a `kill -9` of a
 * Cairn host running a turn, the primary PostgreSQL killed and its replica promoted, and the hosts
 * replaced one at a time by the previous release and then by this one. For each the chaos table
 * says: requests failed, acknowledged messages lost (must be 0), tasks run twice (must be 0),
 * streams cut and rejoined through another host, streams whose run ended in an `error` event, and
 * the time until the cluster served again (printed; figures, not assertions).
 *
 * Needs root (namespaces, nftables), as CI has, and the Debian packages .ci/run installs.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type FakeLlm, fakeLlmEnv, startFakeLlm } from "../fixtures/fakeLlm.ts"
import { checkOutPreviousRelease } from "../support/previousRelease.ts"
import { processStartMs, scaled, sleep } from "../support/time.ts"
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
  readonly streamsEndedInError: number
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
      // Past HAProxy's notice (two failed checks 500 ms apart) before a draining host stops taking requests.
      DRAIN_DELAY_MS: "2000",
      // A drained host finishes the runs it took: the grace is when it would give up on one (10 s by
      // default), which a machine busy with other work must not reach first.
      SHUTDOWN_GRACE_MS: "60000",
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
      streamsEndedInError: tally.streamsEndedInError,
      servesAgainMs,
      note
    }
    table.push(row)
    if (tally.failures.length > 0) console.log(`${name}: failed requests`, tally.failures)
    for (const task of checked.stuck) {
      const session = task.split(":")[0]!
      console.log(
        `${name}: unfinished task ${task}`,
        cluster.sql(`SELECT id, status, owner, task_id, heartbeat_at, created_at, finished_at FROM runs WHERE session_id = '${session}'`)
      )
    }
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
    // The bus listens straight from each host; the pool comes through PgBouncer (on a host of its own).
    for (const host of cluster.cairns) expect(connections).toMatch(new RegExp(`cairn-bus:\\S+@${host.host.address.replaceAll(".", "\\.")}`))
    expect(connections).toContain(`cairn@${cluster.pool.address}`)
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
        partition(victim.host, cluster.databaseAddress, { address: testAddress, port: cluster.poolRelay.port })
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
    let heldTask = ""
    let taskAnsweredMs = -1
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
        heldTask = cluster.sql(`SELECT id FROM tasks WHERE status = 'running' AND worker LIKE '%:${victim.process.pid}:%' LIMIT 1`).trim()
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
            break
          }
          await sleep(250)
        }
        // The task it held (when it held one), until another host has answered it.
        while (heldTask !== "" && taskAnsweredMs < 0 && Date.now() < deadline) {
          if (cluster.sql(`SELECT status FROM tasks WHERE id = '${heldTask}'`).trim() === "complete") taskAnsweredMs = Date.now() - killedAt
          else await sleep(100)
        }
      },
      3_000
    )
    holds(row)
    expect(heldSession).not.toBe("")
    expect(heldAnswersMs).toBeGreaterThanOrEqual(0)
    const task = heldTask === "" ? "it held no task" : `its task answered after ${taskAnsweredMs} ms`
    table[table.length - 1] = { ...row, note: `${row.note}; its held session answered after ${heldAnswersMs} ms, ${task}` }
    // Back to three hosts for the scenarios after this one.
    await cluster.restart(1)
  }, scaled(300_000))

  /** Every Cairn host's readiness, straight (not through the balancer). */
  const readiness = () =>
    Promise.all(
      cluster.cairns.map((cairn) =>
        fetch(`http://${cairn.host.address}:8000/health/ready`, { signal: AbortSignal.timeout(5000) }).then((r) => r.ok).catch(() => false)
      )
    )
  const until = async (what: string, check: () => Promise<boolean> | boolean, timeoutMs: number) => {
    const deadline = Date.now() + scaled(timeoutMs)
    while (!(await check())) {
      if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}`)
      await sleep(250)
    }
  }

  it(
    "the primary PostgreSQL killed and its replica promoted: no acknowledged write lost, the hosts reconnect without a restart",
    async () => {
      const pids = cluster.cairns.map((cairn) => cairn.process.pid)
      let unreadyAfterMs = -1
      let killedAt = 0
      const row = await scenario(
        "PostgreSQL failover",
        () => {
          killedAt = Date.now()
          cluster.killPrimary()
          return "primary killed"
        },
        async () => {
          // While no primary answers, no host is ready (so a balancer sends nothing on); then the promotion.
          await until("every host unready with no primary", async () => (await readiness()).every((ready) => !ready), 30_000)
          unreadyAfterMs = Date.now() - killedAt
          cluster.promoteReplica()
          await until("every host ready on the promoted replica", async () => (await readiness()).every(Boolean), 60_000).catch(
            async (error) => {
              // What each part saw, for the failure message.
              for (const cairn of cluster.cairns) {
                const body = await fetch(`http://${cairn.host.address}:8000/health/ready`, { signal: AbortSignal.timeout(5000) })
                  .then((r) => r.text())
                  .catch(String)
                console.log(cairn.host.name, cairn.process.exitCode, body, cairn.output.slice(-1500))
              }
              for (const log of ["pgbouncer/pgbouncer.log", "logs/replica.log"]) {
                console.log(log, fs.readFileSync(path.join(cluster.dir, log), "utf8").slice(-3000))
              }
              console.log(cluster.pool.exec("ip", ["neigh"]), cluster.replica.exec("ip", ["addr"]))
              throw error
            }
          )
        },
        0
      )
      holds(row)
      table[table.length - 1] = { ...row, note: `${row.note}; every host unready after ${unreadyAfterMs} ms; replica promoted then` }
      // The same processes: reconnected, not restarted.
      expect(cluster.cairns.map((cairn) => cairn.process.pid)).toEqual(pids)
      expect(cluster.cairns.every((cairn) => cairn.process.exitCode === null)).toBe(true)
      expect(cluster.sql("SELECT pg_is_in_recovery()").trim()).toBe("f")
      // Each host's LISTEN is back on the new primary, and the leaders' locks are held there again.
      await until("every host's bus listening on the new primary", () => {
        const names = cluster.sql("SELECT application_name FROM pg_stat_activity WHERE application_name LIKE 'cairn-bus:%'")
        return pids.every((pid) => names.includes(`:${pid}`))
      }, 30_000)
      await until(
        "the leaders' locks held on the new primary",
        () => Number(cluster.sql("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted").trim()) > 0,
        30_000
      )
    },
    scaled(300_000)
  )

  /** Drains each host in turn and starts it again from `root`, waiting for it to be ready before the next. */
  const replaceEach = async (root: string | undefined) => {
    for (let i = 0; i < cluster.cairns.length; i++) {
      await cluster.drain(i)
      await cluster.restart(i, root)
    }
  }

  it("a rolling upgrade: the hosts replaced one at a time by the previous release, then by this one, under traffic", async () => {
    const previous = checkOutPreviousRelease()
    try {
      const note = "3 hosts drained and replaced, one at a time"
      const back = await scenario("rolling back to the previous release", () => note, () => replaceEach(previous), 0)
      holds(back)
      const upgrade = await scenario("rolling upgrade to this release", () => note, () => replaceEach(undefined), 0)
      holds(upgrade)
      // Only a drained host's requests could fail, and a drained host finishes what it took.
      expect(back.failed + upgrade.failed).toBe(0)
    } finally {
      fs.rmSync(previous, { recursive: true, force: true })
    }
    // Six host starts, three of them from source, each with a start's deadline; then two scenarios' traffic and audit.
  }, 6 * processStartMs + scaled(300_000))
})
