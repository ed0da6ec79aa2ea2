/**
 * The webhook dispatcher's transport: a JSON POST to a URL that is not private or loopback unless
 * WEBHOOK_ALLOWED_HOSTS allows it. The hostname is resolved once, every address is checked, and the
 * connection goes to a checked address (the request's own lookup is replaced), so neither a name
 * resolving to an internal address nor a second, different answer (DNS rebinding) gets through.
 * Redirects are not followed.
 */
import { Data } from "effect"
import * as dns from "node:dns"
import * as http from "node:http"
import * as https from "node:https"
import * as net from "node:net"

const blocked = new net.BlockList()
for (const [prefix, bits] of [
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
] as const) blocked.addSubnet(prefix, bits, "ipv4")
for (const [prefix, bits] of [
  ["::", 128],
  ["::1", 128],
  ["fc00::", 7],
  ["fe80::", 10],
  ["ff00::", 8],
  ["64:ff9b::", 96]
] as const) blocked.addSubnet(prefix, bits, "ipv6")

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

export class WebhookRefused extends Data.TaggedError("WebhookRefused")<{ readonly message: string }> {}

/** Resolves a URL's host and checks every address; the addresses to connect to. */
export const resolveTarget = async (url: URL, allowed: AllowList): Promise<Array<dns.LookupAddress>> => {
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new WebhookRefused({ message: `Webhook URL must be http or https: ${url.protocol}` })
  const hostname = url.hostname.replace(/^\[(.*)\]$/, "$1")
  const family = net.isIP(hostname)
  const addresses = family !== 0 ? [{ address: hostname, family }] : await dns.promises.lookup(hostname, { all: true })
  if (addresses.length === 0) throw new WebhookRefused({ message: `Webhook host did not resolve: ${hostname}` })
  if (allowed.host(hostname)) return addresses
  for (const { address } of addresses) {
    if (isInternalAddress(address) && !allowed.address(address)) {
      throw new WebhookRefused({ message: `Webhook target ${hostname} resolves to a private or loopback address (${address}); allow it with WEBHOOK_ALLOWED_HOSTS` })
    }
  }
  return addresses
}

/** POSTs JSON to a checked target; resolves on 2xx, rejects otherwise. */
export const postJson = async (
  target: string,
  payload: unknown,
  options: { readonly allowed: AllowList; readonly timeoutMs: number }
): Promise<number> => {
  let url: URL
  try {
    url = new URL(target)
  } catch {
    throw new WebhookRefused({ message: `Webhook URL is not a valid URL: ${target}` })
  }
  const addresses = await resolveTarget(url, options.allowed)
  const body = JSON.stringify(payload)
  const client = url.protocol === "https:" ? https : http
  return new Promise<number>((resolve, reject) => {
    const request = client.request(
      url,
      {
        method: "POST",
        headers: { "content-type": "application/json", "content-length": Buffer.byteLength(body), "user-agent": "cairn-dispatch" },
        timeout: options.timeoutMs,
        lookup: ((_host, lookupOptions, callback) => {
          if (lookupOptions?.all) callback(null, addresses)
          else callback(null, addresses[0]!.address, addresses[0]!.family)
        }) satisfies net.LookupFunction
      },
      (response) => {
        response.resume()
        response.on("end", () => {
          const status = response.statusCode ?? 0
          if (status >= 200 && status < 300) resolve(status)
          else reject(new Error(`Webhook answered ${status}`))
        })
      }
    )
    request.on("timeout", () => request.destroy(new Error(`Webhook did not answer within ${options.timeoutMs} ms`)))
    request.on("error", reject)
    request.end(body)
  })
}
