/**
 * A webhook receiver on 127.0.0.1 for hook delivery tests: a real node:http server that records
 * every request and answers as told (a status, statuses in turn, or never).
 */
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { scaled } from "../support/time.ts"

export interface ReceivedRequest {
  readonly method: string
  readonly url: string
  readonly headers: http.IncomingHttpHeaders
  readonly body: string
  readonly receivedAt: number
  /** When the client gave up or the exchange ended; undefined while the connection is open. */
  closedAt?: number
}

/** `statuses` answers the requests in turn, the last repeating: a retry test's failures need no race with the retries. */
export type ReceiverMode = { readonly status: number } | { readonly statuses: ReadonlyArray<number> } | "hang"

const statusFor = (mode: Exclude<ReceiverMode, "hang">, answered: number) =>
  "status" in mode ? mode.status : mode.statuses[Math.min(answered, mode.statuses.length - 1)]!

export interface WebhookReceiver {
  readonly url: string
  readonly requests: Array<ReceivedRequest>
  mode: ReceiverMode
  /** Resolves once `count` requests have arrived, or rejects after `timeoutMs` (scaled by TEST_TIME_SCALE). */
  readonly waitFor: (count: number, timeoutMs?: number) => Promise<ReadonlyArray<ReceivedRequest>>
  readonly close: () => Promise<void>
}

export const startReceiver = async (mode: ReceiverMode = { status: 204 }): Promise<WebhookReceiver> => {
  const requests: Array<ReceivedRequest> = []
  const waiters: Array<() => void> = []
  const open = new Set<http.ServerResponse>()
  let answeredInMode = 0
  let lastMode: ReceiverMode = mode
  const server = http.createServer((req, res) => {
    let body = ""
    req.setEncoding("utf8")
    req.on("data", (chunk) => (body += chunk))
    req.on("end", () => {
      const record: ReceivedRequest = {
        method: req.method ?? "",
        url: req.url ?? "",
        headers: req.headers,
        body,
        receivedAt: performance.now()
      }
      requests.push(record)
      res.on("close", () => (record.closedAt = performance.now()))
      for (const wake of waiters.splice(0)) wake()
      if (receiver.mode === "hang") {
        open.add(res)
        return
      }
      if (receiver.mode !== lastMode) [lastMode, answeredInMode] = [receiver.mode, 0]
      res.writeHead(statusFor(receiver.mode, answeredInMode++), { "content-type": "application/json" })
      res.end("{\"ok\":true}")
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const port = (server.address() as AddressInfo).port
  const receiver: WebhookReceiver = {
    url: `http://127.0.0.1:${port}`,
    requests,
    mode,
    waitFor: (count, timeoutMs = 10_000) =>
      new Promise((resolve, reject) => {
        const deadline = setTimeout(
          () => reject(new Error(`expected ${count} webhook requests, got ${requests.length}`)),
          scaled(timeoutMs)
        )
        const check = () => {
          if (requests.length >= count) {
            clearTimeout(deadline)
            resolve(requests.slice(0, count))
          } else {
            waiters.push(check)
          }
        }
        check()
      }),
    close: async () => {
      for (const res of open) res.destroy()
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    }
  }
  return receiver
}
