/**
 * The cluster on the namespaces of `Netns.ts`: a PostgreSQL primary (an instance of its own, made
 * with initdb and pg_ctl, not the machine's) with a synchronous streaming replica on another host,
 * both reached at a service address (a virtual IP) that the primary holds and a failover moves to the
 * promoted replica; PgBouncer in transaction mode on a host of its own in front of that address;
 * three Cairn hosts reaching PostgreSQL through PgBouncer (their LISTEN and leader locks around it,
 * at the service address: DATABASE_LISTEN_URL); and HAProxy on its own host, health-checking each
 * Cairn host's `/health/ready`.
 */
import type { ChildProcess } from "node:child_process"
import * as fs from "node:fs"
import * as net from "node:net"
import * as path from "node:path"
import { API_KEY } from "../support/server.ts"
import { processStartMs, scaled, sleep } from "../support/time.ts"
import { type DelayRelay, startDelayRelay } from "./Latency.ts"
import { addAddress, addressAt, type Host, killEveryProcess, makeHost, moveAddress, subnetCidr, testAddress } from "./Netns.ts"

const pgBin = "/usr/lib/postgresql/15/bin"
const repoRoot = path.resolve(import.meta.dirname, "../..")
export const balancerPort = 8080
const cairnPort = 8000

export interface CairnHost {
  readonly host: Host
  process: ChildProcess
  output: string
}

export interface Cluster {
  readonly dir: string
  readonly primary: Host
  readonly replica: Host
  /** PgBouncer's host. */
  readonly pool: Host
  /** Where PostgreSQL's primary answers: the primary's, after a failover the promoted replica's. */
  readonly databaseAddress: string
  readonly balancer: Host
  readonly cairns: Array<CairnHost>
  readonly baseUrl: string
  /** A statement on whichever PostgreSQL holds the service address, straight (psql from the pool's host): its rows' text. */
  readonly sql: (statement: string) => string
  /** Starts Cairn host `i` again (after a kill), of the release in `root` (this checkout when not given). */
  readonly restart: (i: number, root?: string) => Promise<void>
  /** Stops Cairn host `i` as an operator would (SIGTERM: readiness off, drain) and waits for its exit. */
  readonly drain: (i: number) => Promise<void>
  /** Kills the primary's PostgreSQL (SIGKILL to every process of its host); the host's network stays. */
  readonly killPrimary: () => void
  /** Promotes the replica (`pg_ctl promote`) and moves the service address to it. */
  readonly promoteReplica: () => void
  readonly children: Array<ChildProcess>
  /** The relay the hosts' pool goes through to PgBouncer: its delay is the latency to PostgreSQL. */
  readonly poolRelay: DelayRelay
}

const asPostgres = (dir: string) => fs.chownSync(dir, 101, 104)

/** Output of a child kept for the failure message, bounded. */
const collect = (child: ChildProcess, onText: (text: string) => void) => {
  child.stdout?.on("data", (chunk) => onText(String(chunk)))
  child.stderr?.on("data", (chunk) => onText(String(chunk)))
}

/** Reads and drops a child's output, so a full pipe never blocks it. */
const discardOutput = (child: ChildProcess) => {
  child.stdout?.resume()
  child.stderr?.resume()
}

/** Polls `check` until it holds, for at most `limitMs` (a deadline already scaled: `scaled(…)` or `processStartMs`). */
const waitUntil = async (what: string, check: () => Promise<boolean> | boolean, limitMs: number) => {
  const deadline = Date.now() + limitMs
  while (Date.now() < deadline) {
    try {
      if (await check()) return
    } catch {
      // not yet
    }
    await sleep(200)
  }
  throw new Error(`Timed out waiting for ${what}`)
}

const pgConfig = (socketDir: string) => `
listen_addresses = '*'
port = 5432
unix_socket_directories = '${socketDir}'
max_connections = 200
wal_level = replica
max_wal_senders = 5
hot_standby = on
fsync = off
full_page_writes = off
`

const asUser = (host: Host, command: string, args: ReadonlyArray<string>) =>
  host.exec("runuser", ["-u", "postgres", "--", command, ...args])

/** The primary, its database, then the replica streaming from it, then synchronous commits. */
const startPostgres = async (dir: string, primary: Host, replica: Host) => {
  const data = path.join(dir, "primary")
  const replicaData = path.join(dir, "replica")
  const sockets = path.join(dir, "sockets")
  const logs = path.join(dir, "logs")
  for (const folder of [data, replicaData, sockets, logs]) {
    fs.mkdirSync(folder, { recursive: true, mode: 0o700 })
    asPostgres(folder)
  }
  asUser(primary, `${pgBin}/initdb`, ["-D", data, "-A", "trust", "-U", "postgres", "--no-sync"])
  fs.appendFileSync(path.join(data, "postgresql.conf"), pgConfig(sockets))
  fs.appendFileSync(path.join(data, "pg_hba.conf"), `host all all ${subnetCidr} trust\nhost replication all ${subnetCidr} trust\n`)
  asUser(primary, `${pgBin}/pg_ctl`, ["-D", data, "-l", path.join(logs, "primary.log"), "-w", "start"])
  const psql = (statement: string) =>
    asUser(primary, `${pgBin}/psql`, ["-h", primary.address, "-U", "postgres", "-d", "postgres", "-tAc", statement])
  psql("CREATE DATABASE cairn")
  asUser(replica, `${pgBin}/pg_basebackup`, [
    "-h",
    primary.address,
    "-U",
    "postgres",
    "-D",
    replicaData,
    "-R",
    "-X",
    "stream",
    "-c",
    "fast"
  ])
  fs.appendFileSync(
    path.join(replicaData, "postgresql.auto.conf"),
    `unix_socket_directories = '${path.join(dir, "replica-sockets")}'\n` +
      `primary_conninfo = 'host=${primary.address} port=5432 user=postgres application_name=replica'\n`
  )
  fs.mkdirSync(path.join(dir, "replica-sockets"), { mode: 0o700 })
  asPostgres(path.join(dir, "replica-sockets"))
  asUser(replica, `${pgBin}/pg_ctl`, ["-D", replicaData, "-l", path.join(logs, "replica.log"), "-w", "start"])
  await waitUntil(
    "the replica streaming",
    () => psql("SELECT count(*) FROM pg_stat_replication WHERE state = 'streaming'").trim() === "1",
    scaled(30_000)
  )
  // From now on a commit is acknowledged once the replica has it too.
  psql("ALTER SYSTEM SET synchronous_standby_names = 'replica'")
  psql("SELECT pg_reload_conf()")
}

/**
 * PgBouncer 1.18 (Debian's) in transaction mode (no prepared statements across transactions), in
 * front of the service address. While its server logins fail (no primary) it turns clients away
 * at once and tries the server again after `server_login_retry`: 1 s here, not the default 15, so
 * the pool is back within a second of the promoted replica answering.
 */
const startPgBouncer = (dir: string, pool: Host, databaseAddress: string, children: Array<ChildProcess>) => {
  const folder = path.join(dir, "pgbouncer")
  fs.mkdirSync(folder)
  fs.writeFileSync(path.join(folder, "users.txt"), `"postgres" ""\n`)
  fs.writeFileSync(
    path.join(folder, "pgbouncer.ini"),
    `[databases]
cairn = host=${databaseAddress} port=5432 dbname=cairn
[pgbouncer]
listen_addr = ${pool.address}
listen_port = 6432
unix_socket_dir =
auth_type = trust
auth_file = ${path.join(folder, "users.txt")}
pool_mode = transaction
max_client_conn = 1000
default_pool_size = 40
ignore_startup_parameters = extra_float_digits,options
server_login_retry = 1
server_connect_timeout = 3
logfile = ${path.join(folder, "pgbouncer.log")}
`
  )
  for (const file of ["", "users.txt", "pgbouncer.ini"]) fs.chownSync(path.join(folder, file), 101, 104)
  const child = pool.spawn("/usr/sbin/pgbouncer", [path.join(folder, "pgbouncer.ini")], {}, "postgres")
  // It logs to stderr too (its file is the record): an unread pipe would fill and stop it mid-failover.
  discardOutput(child)
  children.push(child)
  return child
}

const startBalancer = (dir: string, balancer: Host, cairns: ReadonlyArray<Host>, children: Array<ChildProcess>) => {
  const file = path.join(dir, "haproxy.cfg")
  // A check unanswered within `timeout check` fails as a 503 would: 10 s, so a host slowed by a busy
  // machine stays in, while a refused connection or a 503 (a draining or dead host, or one whose
  // readiness gave up on the database after 3 s) still takes it out after two checks.
  fs.writeFileSync(
    file,
    `global
  maxconn 4000
defaults
  mode http
  timeout connect 2s
  timeout client 120s
  timeout server 120s
  timeout check 10s
  retries 2
  option redispatch
frontend web
  bind ${balancer.address}:${balancerPort}
  default_backend cairn
backend cairn
  balance roundrobin
  option httpchk GET /health/ready
  http-check expect status 200
  default-server inter 500 fall 2 rise 2
${cairns.map((host) => `  server ${host.name} ${host.address}:${cairnPort} check`).join("\n")}
`
  )
  const child = balancer.spawn("/usr/sbin/haproxy", ["-db", "-f", file])
  discardOutput(child)
  children.push(child)
  return child
}

/**
 * A TCP relay on the test's own address to the fake LLM on loopback, for the hosts to reach. Its
 * `close` cuts the connections still open: a killed host's never end by themselves.
 */
export const relayToLoopback = (port: number) =>
  new Promise<{ readonly port: number; readonly close: () => Promise<void> }>((resolve, reject) => {
    const sockets = new Set<net.Socket>()
    const relay = net.createServer((socket) => {
      const upstream = net.connect(port, "127.0.0.1")
      for (const end of [socket, upstream]) {
        sockets.add(end)
        end.on("close", () => sockets.delete(end))
      }
      socket.pipe(upstream).pipe(socket)
      socket.on("error", () => upstream.destroy())
      upstream.on("error", () => socket.destroy())
    })
    relay.once("error", reject)
    relay.listen(0, testAddress, () =>
      resolve({
        port: (relay.address() as net.AddressInfo).port,
        close: () =>
          new Promise<void>((done) => {
            for (const socket of sockets) socket.destroy()
            relay.close(() => done())
          })
      }))
  })

/** Cairn on `host`, of the release in `root` (another release runs from its source). */
const spawnCairn = (host: Host, dir: string, env: Record<string, string>, root: string) => {
  const dataDir = path.join(dir, `data-${host.name}`)
  fs.mkdirSync(dataDir, { recursive: true })
  return host.spawn(process.execPath, [path.join(root, "bin/cairn.mjs"), "serve"], {
    ...env,
    ...(root === repoRoot ? {} : { CAIRN_FROM_SOURCE: "1" }),
    HOST: host.address,
    PORT: String(cairnPort),
    DATA_DIR: dataDir,
    API_KEY
  })
}

const readyAt = (host: Host) => async () => (await fetch(`http://${host.address}:${cairnPort}/health/ready`)).ok

/** Everything up and ready behind the balancer (on the switch `makeSwitch` made); `env` is every Cairn host's (the LLM's address). */
export const startCluster = async (dir: string, env: Record<string, string>): Promise<Cluster> => {
  const primary = makeHost("pg", 20)
  const replica = makeHost("pgr", 21)
  const pool = makeHost("pool", 22)
  const databaseAddress = addressAt(25)
  const balancer = makeHost("lb", 10)
  const hosts = ["a", "b", "c"].map((name, i) => makeHost(name, 31 + i))
  const children: Array<ChildProcess> = []
  addAddress(primary, databaseAddress)
  await startPostgres(dir, primary, replica)
  const sql = (statement: string) =>
    asUser(pool, `${pgBin}/psql`, ["-h", databaseAddress, "-U", "postgres", "-d", "cairn", "-tAc", statement])
  startPgBouncer(dir, pool, databaseAddress, children)
  const poolRelay = await startDelayRelay(testAddress, { host: pool.address, port: 6432 })
  const cairnEnv = {
    ...env,
    // The pool through the delaying relay (Latency.ts) to PgBouncer; the LISTEN straight to PostgreSQL.
    DATABASE_URL: `postgres://postgres@${testAddress}:${poolRelay.port}/cairn`,
    DATABASE_PREPARED_STATEMENTS: "false",
    DATABASE_LISTEN_URL: `postgres://postgres@${databaseAddress}:5432/cairn`
  }
  const start = (host: Host, root = repoRoot): CairnHost => {
    const child = spawnCairn(host, dir, cairnEnv, root)
    children.push(child)
    const cairn: CairnHost = { host, process: child, output: "" }
    collect(child, (text) => (cairn.output = (cairn.output + text).slice(-20_000)))
    return cairn
  }
  // One first, so the migrations run once.
  const cairns = [start(hosts[0]!)]
  await waitUntil("the first Cairn host ready", readyAt(hosts[0]!), processStartMs)
  cairns.push(start(hosts[1]!), start(hosts[2]!))
  await Promise.all(hosts.slice(1).map((host) => waitUntil(`Cairn host ${host.name} ready`, readyAt(host), processStartMs)))
  startBalancer(dir, balancer, hosts, children)
  const baseUrl = `http://${balancer.address}:${balancerPort}`
  await waitUntil("the balancer", async () => (await fetch(`${baseUrl}/health/ready`)).ok, scaled(30_000))
  return {
    dir,
    primary,
    replica,
    pool,
    databaseAddress,
    balancer,
    cairns,
    baseUrl,
    sql,
    children,
    poolRelay,
    restart: async (i, root) => {
      const fresh = start(cairns[i]!.host, root)
      cairns[i] = fresh
      await waitUntil(`Cairn host ${fresh.host.name} ready again`, readyAt(fresh.host), processStartMs)
    },
    drain: async (i) => {
      const child = cairns[i]!.process
      if (child.exitCode !== null || child.signalCode !== null) return
      const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()))
      child.kill("SIGTERM")
      await exited
    },
    killPrimary: () => {
      // Every process of the primary's host, postmaster and backends, as a crash would.
      killEveryProcess(primary.namespace)
    },
    promoteReplica: () => {
      asUser(replica, `${pgBin}/pg_ctl`, ["-D", path.join(dir, "replica"), "-w", "promote"])
      moveAddress(databaseAddress, primary, replica)
    }
  }
}

/** Stops every process the cluster started (PostgreSQL by pg_ctl, in its namespace). */
export const stopCluster = async (cluster: Cluster | undefined, dir: string) => {
  await cluster?.poolRelay.close()
  for (const child of cluster?.children ?? []) {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL")
  }
  for (const data of ["primary", "replica"]) {
    const folder = path.join(dir, data)
    if (!fs.existsSync(path.join(folder, "postmaster.pid"))) continue
    try {
      cluster?.primary.exec("runuser", ["-u", "postgres", "--", `${pgBin}/pg_ctl`, "-D", folder, "-m", "immediate", "stop"])
    } catch {
      // already stopped
    }
  }
}
