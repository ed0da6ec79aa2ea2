/**
 * The guard of every outbound call to an address that comes from configuration or input (the
 * webhook dispatcher, integrations' HTTP client): a URL that is not http(s), or whose host resolves
 * to a private, loopback, link-local or otherwise internal address, is refused unless an allow list
 * names it. The hostname is resolved once, every address is checked, and the connection goes to a
 * checked address (the request's own lookup is replaced), so neither a name resolving to an
 * internal address nor a second, different answer (DNS rebinding) gets through. Redirects are never
 * followed.
 */
import { Data } from "effect"
import * as dns from "node:dns"
import * as http from "node:http"
import * as https from "node:https"
import * as net from "node:net"

const blocked = new net.BlockList()
for (
  const [prefix, bits] of [
    ["0.0.0.0", 8],
    ["10.0.0.0", 8],
    ["100.64.0.0", 10],
    ["127.0.0.0", 8],
    ["169.254.0.0", 16],
    ["172.16.0.0", 12],
    ["192.0.0.0", 24],
    ["192.168.0.0", 16],
    ["198.18.0.0", 15],
    ["224.0.0.0", 4],
    ["240.0.0.0", 4]
  ] as const
) blocked.addSubnet(prefix, bits, "ipv4")
for (
  const [prefix, bits] of [
    ["::", 128],
    ["::1", 128],
    ["fc00::", 7],
    ["fe80::", 10],
    ["ff00::", 8],
    ["64:ff9b::", 96]
  ] as const
) blocked.addSubnet(prefix, bits, "ipv6")

/** Whether an address is private, loopback, link-local, multicast or otherwise not public. */
export const isInternalAddress = (address: string): boolean => {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)
  if (mapped) return blocked.check(mapped[1]!, "ipv4")
  const family = net.isIP(address)
  if (family === 0) return true
  return blocked.check(address, family === 4 ? "ipv4" : "ipv6")
}

/** WEBHOOK_ALLOWED_HOSTS entries: hostnames, addresses, or CIDR blocks. */
export const allowList = (entries: ReadonlyArray<string>) => {
  const names = new Set<string>()
  const cidrs = new net.BlockList()
  for (const raw of entries) {
    const entry = raw.trim().toLowerCase()
    if (!entry) continue
    const [prefix, bits] = entry.split("/")
    const family = net.isIP(prefix!)
    if (bits !== undefined && family !== 0) cidrs.addSubnet(prefix!, Number(bits), family === 4 ? "ipv4" : "ipv6")
    else if (family !== 0) cidrs.addAddress(prefix!, family === 4 ? "ipv4" : "ipv6")
    else names.add(entry)
  }
  return {
    host: (hostname: string) => names.has(hostname.toLowerCase()),
    address: (address: string) => {
      const family = net.isIP(address)
      return family !== 0 && cidrs.check(address, family === 4 ? "ipv4" : "ipv6")
    }
  }
}

export type AllowList = ReturnType<typeof allowList>

/** A target the guard refuses (not http(s), unresolvable, or internal and not allowed). */
export class OutboundRefused extends Data.TaggedError("OutboundRefused")<{ readonly message: string }> {}

/** Who asks, for the messages: the kind of target and the setting that allows an internal one. */
export interface GuardLabel {
  readonly what: string
  readonly setting: string
}

const webhookLabel: GuardLabel = { what: "Webhook", setting: "WEBHOOK_ALLOWED_HOSTS" }

/** Resolves a URL's host and checks every address; the addresses to connect to. */
export const resolveTarget = async (url: URL, allowed: AllowList, label: GuardLabel = webhookLabel): Promise<Array<dns.LookupAddress>> => {
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new OutboundRefused({ message: `${label.what} URL must be http or https: ${url.protocol}` })
  }
  const hostname = url.hostname.replace(/^\[(.*)\]$/, "$1")
  const family = net.isIP(hostname)
  const addresses = family !== 0 ? [{ address: hostname, family }] : await dns.promises.lookup(hostname, { all: true })
  if (addresses.length === 0) throw new OutboundRefused({ message: `${label.what} host did not resolve: ${hostname}` })
  if (allowed.host(hostname)) return addresses
  for (const { address } of addresses) {
    if (isInternalAddress(address) && !allowed.address(address)) {
      throw new OutboundRefused({
        message: `${label.what} target ${hostname} resolves to a private or loopback address (${address}); allow it with ${label.setting}`
      })
    }
  }
  return addresses
}

export interface GuardedRequest {
  readonly method: string
  readonly headers: Record<string, string>
  readonly body?: string | Uint8Array | undefined
  readonly timeoutMs: number
  readonly allowed: AllowList
  readonly label?: GuardLabel
  readonly signal?: AbortSignal | undefined
  /** The most of the answer's body read; a longer body is cut there and the answer says so. */
  readonly maxBytes?: number
}

export interface GuardedResponse {
  readonly status: number
  readonly headers: Record<string, string>
  readonly body: Buffer
  /** The body was longer than `maxBytes` and was cut. */
  readonly truncated?: boolean
}

/** One request to a checked target; the whole exchange (answer included) within `timeoutMs`. */
export const guardedRequest = async (target: string, options: GuardedRequest): Promise<GuardedResponse> => {
  const label = options.label ?? webhookLabel
  let url: URL
  try {
    url = new URL(target)
  } catch {
    throw new OutboundRefused({ message: `${label.what} URL is not a valid URL: ${target}` })
  }
  const addresses = await resolveTarget(url, options.allowed, label)
  const client = url.protocol === "https:" ? https : http
  return new Promise<GuardedResponse>((resolve, reject) => {
    const request = client.request(
      url,
      {
        method: options.method,
        headers: {
          ...options.headers,
          ...(options.body !== undefined ? { "content-length": String(Buffer.byteLength(options.body)) } : {})
        },
        ...(options.signal ? { signal: options.signal } : {}),
        lookup: ((_host, lookupOptions, callback) => {
          if (lookupOptions?.all) callback(null, addresses)
          else callback(null, addresses[0]!.address, addresses[0]!.family)
        }) satisfies net.LookupFunction
      },
      (response) => {
        const chunks: Array<Buffer> = []
        let received = 0
        let truncated = false
        const finish = () => {
          clearTimeout(timer)
          const headers: Record<string, string> = {}
          for (const [name, value] of Object.entries(response.headers)) {
            if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(", ") : value
          }
          const body = Buffer.concat(chunks)
          resolve({
            status: response.statusCode ?? 0,
            headers,
            body: options.maxBytes !== undefined ? body.subarray(0, options.maxBytes) : body,
            ...(truncated ? { truncated } : {})
          })
        }
        response.on("data", (chunk: Buffer) => {
          chunks.push(chunk)
          received += chunk.length
          // Enough read: the rest is never downloaded.
          if (options.maxBytes !== undefined && received > options.maxBytes && !truncated) {
            truncated = true
            finish()
            request.destroy()
          }
        })
        response.on("error", (error) => (truncated ? undefined : reject(error)))
        response.on("end", () => (truncated ? undefined : finish()))
      }
    )
    const timer = setTimeout(
      () => request.destroy(new Error(`${label.what} did not answer within ${options.timeoutMs} ms`)),
      options.timeoutMs
    )
    request.on("error", (error) => {
      clearTimeout(timer)
      reject(error)
    })
    // A cut body destroys the request; that is not a failure.
    request.on("close", () => clearTimeout(timer))
    request.end(options.body)
  })
}
