/**
 * Latency to PostgreSQL without `tc netem`, which this machine's kernel lacks (no `sch_netem`: "Specified
 * qdisc kind is unknown"; `prio` is missing too): the Cairn hosts' pool reaches PgBouncer through
 * this relay on the test's own address, which holds every chunk for half the delay each way, in
 * order, on connections already open as on new ones. With `tc netem` present, `Netns.addLatency`
 * shapes the hosts' own interfaces instead.
 */
import * as net from "node:net"

export interface DelayRelay {
  readonly port: number
  /** The round trip added from now on (half each way). */
  readonly setDelay: (ms: number) => void
  readonly close: () => Promise<void>
}

export const startDelayRelay = (listenAddress: string, target: { readonly host: string; readonly port: number }, listenPort = 0) =>
  new Promise<DelayRelay>((resolve, reject) => {
    let oneWayMs = 0
    const sockets = new Set<net.Socket>()
    /** `from`'s chunks to `to`, each sent `oneWayMs` after it came, never before the one before it. */
    const forward = (from: net.Socket, to: net.Socket) => {
      let notBefore = 0
      from.on("data", (chunk) => {
        const at = Math.max(Date.now() + oneWayMs, notBefore)
        notBefore = at
        const wait = at - Date.now()
        if (wait <= 0 && !to.destroyed) to.write(chunk)
        else setTimeout(() => to.destroyed || to.write(chunk), wait)
      })
      from.on("end", () => setTimeout(() => to.end(), Math.max(0, notBefore - Date.now())))
      from.on("error", () => to.destroy())
      from.on("close", () => setTimeout(() => to.destroy(), Math.max(0, notBefore - Date.now()) + 10))
    }
    const server = net.createServer((client) => {
      const upstream = net.connect(target.port, target.host)
      for (const socket of [client, upstream]) {
        sockets.add(socket)
        socket.on("close", () => sockets.delete(socket))
      }
      forward(client, upstream)
      forward(upstream, client)
    })
    server.once("error", reject)
    server.listen(listenPort, listenAddress, () =>
      resolve({
        port: (server.address() as net.AddressInfo).port,
        setDelay: (ms) => (oneWayMs = ms / 2),
        close: () =>
          new Promise<void>((done) => {
            for (const socket of sockets) socket.destroy()
            server.close(() => done())
          })
      }))
  })
