/**
 * Hosts as Linux network namespaces (`ip netns`), each with one veth into a bridge of a namespace
 * of its own (the switch), on a /24 of this run's own (10.N.0.0/24, N claimed by `claimNetwork`);
 * the test process joins the switch by one more veth (10.N.0.1), to reach the balancer and to lend
 * the fake LLM. Nothing routes further: the namespaces have no default route and the test's own
 * address answers only what it listens on.
 * A partition is nftables inside the host's namespace. `addLatency` (`tc netem`) is kept for a kernel
 * that has `sch_netem`; this machine's has not, so the test delays the pool's path with a relay
 * (Latency.ts).
 * `teardown` removes every namespace of this run (and with them their veths, bridge and rules), also
 * after a failure; a claim taken over from a killed run removes what that run left.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

const alive = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM"
  }
}

/**
 * SIGKILL to every process in a namespace, again until none is left: one may end between the listing
 * and its kill (no error), or be forked just before its parent's kill (a backend by its postmaster).
 */
export const killEveryProcess = (namespace: string) => {
  for (let round = 0; round < 20; round++) {
    const pids = run("ip", ["netns", "pids", namespace]).split("\n").filter((pid) => pid.length > 0).map(Number)
    if (pids.length === 0) return
    for (const pid of pids) {
      try {
        process.kill(pid, "SIGKILL")
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "ESRCH") throw error
      }
    }
  }
}

/**
 * The network number N of this run: the first of 61..250 whose claim file no living process holds,
 * so two suites on one machine (each with its own cluster) never share a namespace, link or address.
 */
const claimNetwork = () => {
  for (let n = 61; n <= 250; n++) {
    const claim = path.join(os.tmpdir(), `cairn-netns-${n}.claim`)
    try {
      fs.writeFileSync(claim, String(process.pid), { flag: "wx" })
      return n
    } catch {
      const holder = Number(fs.readFileSync(claim, "utf8").trim())
      if (Number.isInteger(holder) && holder > 0 && alive(holder)) continue
      // A killed run's claim: taken over by renaming, which only one claimant can win.
      const mine = `${claim}.${process.pid}`
      fs.writeFileSync(mine, String(process.pid))
      try {
        fs.renameSync(mine, claim)
      } catch {
        continue
      }
      if (fs.readFileSync(claim, "utf8").trim() === String(process.pid)) return n
    }
  }
  throw new Error("no free test network among 10.61.0.0/24 .. 10.250.0.0/24")
}

const network = claimNetwork()
process.on("exit", () => fs.rmSync(path.join(os.tmpdir(), `cairn-netns-${network}.claim`), { force: true }))

/** The prefix of every namespace and link this run makes (short: a link name holds 15 characters). */
export const prefix = `c${network}`
const subnet = `10.${network}.0`
/** The run's /24, for the PostgreSQL hosts' pg_hba. */
export const subnetCidr = `${subnet}.0/24`
export const testAddress = `${subnet}.1`
const rootLink = `${prefix}root`

export const run = (command: string, args: ReadonlyArray<string>, input?: string) =>
  execFileSync(command, [...args], { encoding: "utf8", stdio: ["pipe", "pipe", "pipe"], ...(input === undefined ? {} : { input }) })

const ip = (...args: ReadonlyArray<string>) => run("ip", args)

export interface Host {
  readonly name: string
  readonly namespace: string
  readonly address: string
  /** `command` run to its end inside the host. */
  readonly exec: (command: string, args: ReadonlyArray<string>, input?: string) => string
  /** `command` started inside the host (as `user` when given); it lives until killed. */
  readonly spawn: (command: string, args: ReadonlyArray<string>, env?: Record<string, string>, user?: string) => ChildProcess
}

const namespaces = () =>
  ip("netns", "list")
    .split("\n")
    .map((line) => line.split(" ")[0]!)
    .filter((name) => name.startsWith(`${prefix}-`))

/** Removes every namespace of this run's prefix (its own, or a killed run's of the same claim) and the test's own veth. */
export const teardown = () => {
  for (const namespace of namespaces()) {
    // Processes still inside keep nothing of the namespace alive once it is deleted, but a listener
    // would linger: end them first.
    try {
      killEveryProcess(namespace)
    } catch {
      // no such namespace any more
    }
    try {
      ip("netns", "delete", namespace)
    } catch {
      // deleted meanwhile
    }
  }
  try {
    ip("link", "delete", rootLink)
  } catch {
    // deleted with the switch's namespace
  }
}

const switchNamespace = `${prefix}-sw`

/** The switch: a namespace with a bridge, and the test process's veth into it. */
export const makeSwitch = () => {
  teardown()
  ip("netns", "add", switchNamespace)
  const inSwitch = (...args: ReadonlyArray<string>) => ip("-n", switchNamespace, ...args)
  inSwitch("link", "add", "br0", "type", "bridge")
  inSwitch("link", "set", "br0", "up")
  ip("link", "add", rootLink, "type", "veth", "peer", "name", `${prefix}root-p`)
  ip("link", "set", `${prefix}root-p`, "netns", switchNamespace)
  inSwitch("link", "set", `${prefix}root-p`, "master", "br0")
  inSwitch("link", "set", `${prefix}root-p`, "up")
  ip("addr", "add", `${testAddress}/24`, "dev", rootLink)
  ip("link", "set", rootLink, "up")
}

/** A host on the switch at 10.N.0.`octet`. */
export const makeHost = (name: string, octet: number): Host => {
  const namespace = `${prefix}-${name}`
  const address = `${subnet}.${octet}`
  ip("netns", "add", namespace)
  const port = `${prefix}${name}-p`
  ip("link", "add", "eth0", "netns", namespace, "type", "veth", "peer", "name", port, "netns", switchNamespace)
  ip("-n", switchNamespace, "link", "set", port, "master", "br0")
  ip("-n", switchNamespace, "link", "set", port, "up")
  ip("-n", namespace, "addr", "add", `${address}/24`, "dev", "eth0")
  ip("-n", namespace, "link", "set", "eth0", "up")
  ip("-n", namespace, "link", "set", "lo", "up")
  const exec = (command: string, args: ReadonlyArray<string>, input?: string) =>
    run("ip", ["netns", "exec", namespace, command, ...args], input)
  return {
    name,
    namespace,
    address,
    exec,
    spawn: (command, args, env = {}, user) =>
      spawn("ip", ["netns", "exec", namespace, ...(user ? ["runuser", "-u", user, "--"] : []), command, ...args], {
        env: { ...process.env, ...env },
        stdio: ["ignore", "pipe", "pipe"]
      })
  }
}

/** An address of this run's /24 (a service's, which can move between hosts). */
export const addressAt = (octet: number) => `${subnet}.${octet}`

/**
 * Moves a service address (a virtual IP, as keepalived or a Patroni endpoint moves it) from one
 * host to another, then drops every namespace's neighbour cache, as the new holder's gratuitous
 * ARP would make them learn it.
 */
export const moveAddress = (address: string, from: Host, to: Host) => {
  try {
    ip("-n", from.namespace, "addr", "del", `${address}/24`, "dev", "eth0")
  } catch {
    // not there (already moved)
  }
  ip("-n", to.namespace, "addr", "add", `${address}/24`, "dev", "eth0")
  for (const namespace of namespaces()) ip("-n", namespace, "neigh", "flush", "all")
  ip("neigh", "flush", "dev", rootLink)
}

/** Adds a service address to `host`. */
export const addAddress = (host: Host, address: string) => ip("-n", host.namespace, "addr", "add", `${address}/24`, "dev", "eth0")

/** `delayMs` on every packet `host` sends to `to` (a prio qdisc whose third band is netem; needs sch_prio and sch_netem). */
export const addLatency = (host: Host, to: string, delayMs: number) => {
  host.exec("tc", ["qdisc", "add", "dev", "eth0", "root", "handle", "1:", "prio"])
  host.exec("tc", ["qdisc", "add", "dev", "eth0", "parent", "1:3", "handle", "30:", "netem", "delay", `${delayMs}ms`])
  host.exec("tc", [
    "filter",
    "add",
    "dev",
    "eth0",
    "protocol",
    "ip",
    "parent",
    "1:0",
    "prio",
    "3",
    "u32",
    "match",
    "ip",
    "dst",
    `${to}/32`,
    "flowid",
    "1:3"
  ])
}

export const removeLatency = (host: Host) => host.exec("tc", ["qdisc", "del", "dev", "eth0", "root"])

/**
 * Drops every packet between `host` and `peer` (and to `relay`, an address and port on the way to
 * it: the pool's relay), both ways (nftables, in the host's namespace).
 */
export const partition = (host: Host, peer: string, relay?: { readonly address: string; readonly port: number }) =>
  host.exec(
    "nft",
    ["-f", "-"],
    `table inet ${prefix}cut {
  chain out {
    type filter hook output priority 0; policy accept;
    ip daddr ${peer} drop;
    ${relay ? `ip daddr ${relay.address} tcp dport ${relay.port} drop;` : ""}
  }
  chain in {
    type filter hook input priority 0; policy accept;
    ip saddr ${peer} drop;
    ${relay ? `ip saddr ${relay.address} tcp sport ${relay.port} drop;` : ""}
  }
}
`
  )

export const heal = (host: Host) => host.exec("nft", ["delete", "table", "inet", `${prefix}cut`])
