/**
 * The MQTT side: one connection to the broker with a persistent session (`clean: false`, a stable
 * client id) and a QoS 1 subscription, so the broker keeps what is published while Cairn is down and
 * delivers it on the next connection. Messages are handled one at a time, in order, and each is
 * acknowledged (PUBACK) only once handled: a message whose handling was cut short is delivered again.
 * Reconnecting is the worker supervisor's job: a lost connection fails the run, which is started
 * again with an exponential backoff. The MQTT client loads on the first connection, not with the
 * server: most installs never connect, and loading it was about 90 ms of every start.
 */
import type { FrigateConfig } from "./config.ts"

export interface Listener {
  /** Resolves when the connection ends: rejects with why, unless `stop` ended it. */
  readonly done: Promise<void>
  /** Stops taking messages, waits for the one being handled, and disconnects. */
  readonly stop: () => Promise<void>
}

export const listen = async (
  config: FrigateConfig,
  onMessage: (payload: string) => Promise<void>,
  onConnected: () => void
): Promise<Listener> => {
  const { default: mqtt } = await import("mqtt")
  let stopping = false
  let current: Promise<void> = Promise.resolve()
  const client = mqtt.connect(config.mqttUrl, {
    clientId: config.clientId,
    clean: false,
    protocolVersion: 4,
    reconnectPeriod: 0,
    connectTimeout: 10_000,
    keepalive: 60,
    ...(config.username ? { username: config.username } : {}),
    ...(config.password ? { password: config.password } : {})
  })
  let fail: (error: Error) => void = () => undefined
  let finish: () => void = () => undefined
  const done = new Promise<void>((resolve, reject) => {
    finish = resolve
    fail = reject
  })
  client.handleMessage = (packet, callback) => {
    // Stopping: left unacknowledged, so the broker delivers it again to the next connection.
    if (stopping) return
    const payload = Buffer.isBuffer(packet.payload) ? packet.payload.toString("utf8") : String(packet.payload)
    current = onMessage(payload).then(
      () => {
        if (!stopping) callback()
      },
      (error: unknown) => {
        fail(error instanceof Error ? error : new Error(String(error)))
        client.end(true)
      }
    )
  }
  client.on("connect", () => {
    client.subscribe(config.topic, { qos: 1 }, (error) => {
      if (error) {
        fail(new Error(`MQTT subscribe to ${config.topic} failed: ${error.message}`))
        client.end(true)
      } else {
        onConnected()
      }
    })
  })
  client.on("error", (error) => {
    fail(new Error(`MQTT ${config.mqttUrl}: ${error.message}`))
    client.end(true)
  })
  client.on("close", () => {
    if (stopping) finish()
    else fail(new Error(`MQTT connection to ${config.mqttUrl} closed`))
  })
  return {
    done,
    stop: async () => {
      stopping = true
      await current.catch(() => undefined)
      await new Promise<void>((resolve) => client.end(true, {}, () => resolve()))
      finish()
    }
  }
}
