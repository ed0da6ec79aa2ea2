/**
 * The address a request comes from: the socket's peer, unless that peer is a reverse proxy named in
 * TRUSTED_PROXIES, in which case the address the proxy says it served (`X-Forwarded-For`). Without
 * the setting the header is ignored: anyone can send it, so trusting it by default would let a
 * guesser pick a fresh address for every guess. Behind a proxy that is not named, every request
 * comes from the proxy's address, and the sign-in lockout and the per-address rate limits treat all
 * clients as one.
 */
import type { HttpServerRequest } from "@effect/platform"
import { Config, ConfigError, Effect, Either, Option } from "effect"
import * as net from "node:net"

/** IP addresses and CIDR ranges, comma-separated, into a block list; Left with the entry that is neither. */
export const parseTrustedProxies = (raw: string): Either.Either<net.BlockList, string> => {
  const list = new net.BlockList()
  for (const entry of raw.split(",").map((item) => item.trim()).filter((item) => item.length > 0)) {
    const [address, bits, ...rest] = entry.split("/")
    const family = net.isIPv4(address) ? "ipv4" : net.isIPv6(address) ? "ipv6" : undefined
    const prefix = bits === undefined ? (family === "ipv4" ? 32 : 128) : /^\d{1,3}$/.test(bits) ? Number(bits) : -1
    if (!family || rest.length > 0 || prefix < 0 || prefix > (family === "ipv4" ? 32 : 128)) return Either.left(entry)
    list.addSubnet(address, prefix, family)
  }
  return Either.right(list)
}

/** TRUSTED_PROXIES: the reverse proxies whose `X-Forwarded-For` is believed (none by default). */
const trustedProxiesConfig = Config.string("TRUSTED_PROXIES").pipe(
  Config.withDefault(""),
  Config.mapOrFail((raw) =>
    Either.mapLeft(parseTrustedProxies(raw), (entry) =>
      ConfigError.InvalidData(
        ["TRUSTED_PROXIES"],
        `Expected comma-separated IP addresses or CIDR ranges (10.0.0.0/8, ::1), not "${entry}"`
      ))
  )
)

const familyOf = (address: string) => (net.isIPv4(address) ? "ipv4" : net.isIPv6(address) ? "ipv6" : undefined)

/**
 * The client of a request whose peer is `peer` and whose `X-Forwarded-For` lists `forwarded`: read
 * from the right (each proxy appends the address it was reached from), the first hop that is not a
 * trusted proxy. A hop that is no address ends the walk: it is what the last trusted proxy said.
 */
export const clientOf = (trusted: net.BlockList, peer: string, forwarded: string | undefined): string => {
  let client = peer
  const hops = forwarded === undefined ? [] : forwarded.split(",").map((hop) => hop.trim()).filter((hop) => hop.length > 0)
  while (hops.length > 0) {
    const family = familyOf(client)
    if (!family || !trusted.check(client, family)) break
    client = hops.pop()!
  }
  return client
}

export class ClientAddress extends Effect.Service<ClientAddress>()("cairn/ClientAddress", {
  effect: Effect.map(trustedProxiesConfig, (trusted) => {
    /** The request's client address ("unknown" when the socket gives none). */
    const of = (request: HttpServerRequest.HttpServerRequest): string => {
      const peer = Option.getOrElse(request.remoteAddress, () => "unknown")
      const header = request.headers["x-forwarded-for"]
      return clientOf(trusted, peer, header)
    }
    return { of } as const
  })
}) {}
