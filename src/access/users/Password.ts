/** Password hashes: scrypt (node:crypto) with a random salt, parameters stored with the hash. */
import { Effect } from "effect"
import * as crypto from "node:crypto"

const N = 16_384
const r = 8
const p = 1
const keyLength = 32

const scrypt = (password: string, salt: Buffer, n: number, rr: number, pp: number) =>
  Effect.async<Buffer>((resume) => {
    crypto.scrypt(password.normalize("NFKC"), salt, keyLength, { N: n, r: rr, p: pp, maxmem: 64 * 1024 * 1024 }, (error, key) =>
      resume(error ? Effect.die(error) : Effect.succeed(key)))
  })

/** `scrypt$N$r$p$salt$hash`, base64url parts. */
export const hashPassword = (password: string) =>
  Effect.gen(function*() {
    const salt = crypto.randomBytes(16)
    const key = yield* scrypt(password, salt, N, r, p)
    return `scrypt$${N}$${r}$${p}$${salt.toString("base64url")}$${key.toString("base64url")}`
  })

/** A stand-in hash so an unknown username costs as much time as a wrong password. */
const decoy = `scrypt$${N}$${r}$${p}$${Buffer.alloc(16).toString("base64url")}$${Buffer.alloc(keyLength).toString("base64url")}`

export const verifyPassword = (password: string, stored: string | null) =>
  Effect.gen(function*() {
    const parts = (stored ?? decoy).split("$")
    if (parts.length !== 6 || parts[0] !== "scrypt") return false
    const [, n, rr, pp, salt, hash] = parts
    const expected = Buffer.from(hash!, "base64url")
    const actual = yield* scrypt(password, Buffer.from(salt!, "base64url"), Number(n), Number(rr), Number(pp))
    return stored !== null && actual.length === expected.length && crypto.timingSafeEqual(actual, expected)
  })
