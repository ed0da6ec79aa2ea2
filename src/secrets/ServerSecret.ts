/**
 * The server secret signs tokens and derives encryption keys. It comes from JWT_SECRET, or is
 * generated once and kept in DATA_DIR (mode 0600) so restarts never invalidate tokens or stored
 * secrets. Several replicas must share it: set JWT_SECRET or share DATA_DIR.
 */
import { Context, Effect, Layer, Option, Redacted } from "effect"
import * as crypto from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"
import { AppConfig } from "../config/AppConfig.ts"

export class ServerSecret extends Context.Tag("cairn/ServerSecret")<
  ServerSecret,
  {
    readonly secret: Redacted.Redacted<string>
    /** A 32-byte key for one purpose, derived with HKDF so purposes never share key material. */
    readonly deriveKey: (purpose: string) => Buffer
  }
>() {}

const readOrCreate = (dataDir: string) =>
  Effect.try({
    try: () => {
      const file = path.join(dataDir, "jwt_secret")
      if (fs.existsSync(file)) {
        const stored = fs.readFileSync(file, "utf8").trim()
        if (stored.length >= 32) return stored
      }
      fs.mkdirSync(dataDir, { recursive: true })
      const generated = crypto.randomBytes(48).toString("base64url")
      // wx: never overwrite a secret another process wrote in the meantime.
      try {
        fs.writeFileSync(file, generated + "\n", { mode: 0o600, flag: "wx" })
        return generated
      } catch {
        return fs.readFileSync(file, "utf8").trim()
      }
    },
    catch: (cause) => new Error(`Cannot read or create the server secret in DATA_DIR: ${String(cause)}`)
  })

export const layer = Layer.effect(
  ServerSecret,
  Effect.gen(function*() {
    const config = yield* AppConfig
    const secret = yield* Option.match(config.jwtSecret, {
      onSome: (value) => Effect.succeed(value),
      onNone: () => Effect.map(readOrCreate(config.dataDir), Redacted.make)
    })
    const keys = new Map<string, Buffer>()
    return {
      secret,
      deriveKey: (purpose) => {
        let key = keys.get(purpose)
        if (!key) {
          key = Buffer.from(crypto.hkdfSync("sha256", Redacted.value(secret), "cairn", purpose, 32))
          keys.set(purpose, key)
        }
        return key
      }
    }
  })
)
