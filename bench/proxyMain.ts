/**
 * The round-robin proxy of the replica tests (`test/support/proxy.ts`) as a process of its own, for
 * `bench/replicas.ts`: PROXY_UPSTREAMS names the servers, comma-separated; it listens on a free port.
 */
import { startProxy } from "../test/support/proxy.ts"

const proxy = await startProxy((process.env.PROXY_UPSTREAMS ?? "").split(",").filter((url) => url.length > 0))
console.log(`proxy listening on ${proxy.url}`)
const stop = () => void proxy.close().then(() => process.exit(0))
process.on("SIGINT", stop)
process.on("SIGTERM", stop)
