/**
 * Users managed from the console, over the typed client: invitations by one-time link (stored
 * hashed, single use, expiring, scopes enforced), password reset links, disabling a user (no
 * sign-in, their tokens and keys refused at once), and a user changing their own password (the
 * current one required, every other session ended).
 */
import { SqlClient } from "@effect/sql"
import { Effect, Either } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Forbidden, Unauthorized, ValidationError } from "../../src/contract/Errors.ts"
import { backends } from "../support/database.ts"
import { startServer, type TestServer } from "../support/server.ts"
import { createKey } from "./helpers.ts"

const password = "correct horse battery"

describe.each(backends)("user administration (%s)", (backend) => {
  let server: TestServer
  let admin: string
  beforeAll(async () => {
    server = await startServer({ backend, env: { SIGNIN_FREE_FAILURES: "100" } })
    const root = await server.call((client) => client.auth.setup({ payload: { username: "root", password } }))
    admin = root.access_token
  })
  afterAll(async () => {
    await server?.close()
  })

  const query = (text: string) => server.run(Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe<Record<string, unknown>>(text)))
  const login = (username: string, secret: string) =>
    server.as(null).attempt((client) => client.auth.login({ payload: { username, password: secret } }))

  it("invites by a one-time link: stored hashed, shown masked, spent once, refused once expired", async () => {
    const made = await server.as(admin).call((client) =>
      client.users.invite({ payload: { role: "member", username_hint: "nora", expires_in_hours: 2 } })
    )
    expect(made.path).toBe(`/invite/${made.token}`)
    expect(made.token.startsWith(made.prefix)).toBe(true)
    expect(made).toMatchObject({ kind: "invitation", role: "member", username_hint: "nora", status: "pending" })

    // At rest: the hash, never the token.
    const stored = await query(`SELECT token_hash FROM invitations WHERE id = '${made.id}'`)
    expect(stored[0]!.token_hash).not.toBe(made.token)
    expect(JSON.stringify(await query("SELECT * FROM invitations"))).not.toContain(made.token)
    const listed = await server.as(admin).call((client) => client.users.invitations())
    expect(JSON.stringify(listed)).not.toContain(made.token)
    expect(listed.invitations.find((i) => i.id === made.id)).toMatchObject({ prefix: made.prefix, status: "pending" })

    const anonymous = server.as(null)
    const offer = await anonymous.call((client) => client.auth.invitation({ path: { token: made.token } }))
    expect(offer).toMatchObject({ kind: "invitation", role: "member", username_hint: "nora", username: null })

    // A taken username is said next to the field, and leaves the link unspent.
    const taken = await anonymous.failsWith(
      ValidationError,
      (client) => client.auth.acceptInvitation({ path: { token: made.token }, payload: { username: "root", password } })
    )
    expect(taken.detail[0]).toMatchObject({ loc: ["body", "username"], msg: "That username is taken; choose another" })

    const pair = await anonymous.call((client) =>
      client.auth.acceptInvitation({ path: { token: made.token }, payload: { username: "nora", password } })
    )
    expect(pair.user).toMatchObject({ username: "nora", role: "member", disabled: false })
    expect(pair.user.last_login_at).not.toBeNull()
    const me = await server.as(pair.access_token).call((client) => client.auth.me())
    expect(me.user?.username).toBe("nora")

    // Single use.
    const again = await anonymous.attempt((client) =>
      client.auth.acceptInvitation({ path: { token: made.token }, payload: { username: "nora2", password } })
    )
    expect(Either.isLeft(again) && (again.left as { _tag: string })._tag).toBe("InvitationSpent")
    expect(Either.isLeft(await anonymous.attempt((client) => client.auth.invitation({ path: { token: made.token } })))).toBe(true)
    const used = await server.as(admin).call((client) => client.users.invitations())
    expect(used.invitations.find((i) => i.id === made.id)?.status).toBe("used")

    // Expired.
    const late = await server.as(admin).call((client) => client.users.invite({ payload: { role: "member", expires_in_hours: 72 } }))
    await query(`UPDATE invitations SET expires_at = now() - interval '1 minute' WHERE id = '${late.id}'`)
    const expired = await anonymous.attempt((client) =>
      client.auth.acceptInvitation({ path: { token: late.token }, payload: { username: "late", password } })
    )
    expect(Either.isLeft(expired) && (expired.left as { _tag: string })._tag).toBe("InvitationSpent")

    // Withdrawn.
    const withdrawn = await server.as(admin).call((client) => client.users.invite({ payload: { role: "member", expires_in_hours: 72 } }))
    await server.as(admin).call((client) => client.users.withdrawInvitation({ path: { id: withdrawn.id } }))
    expect(Either.isLeft(await anonymous.attempt((client) => client.auth.invitation({ path: { token: withdrawn.token } })))).toBe(true)
  })

  it("enforces the scopes: users:read lists, users:write invites members, only admin invites admins", async () => {
    const reader = await createKey(server, ["users:read"])
    const writer = await createKey(server, ["users:write"])
    await server.as(reader.key).call((client) => client.users.invitations())
    await server.as(reader.key).failsWith(Forbidden, (client) => client.users.invite({ payload: { role: "member", expires_in_hours: 72 } }))
    await server.as(writer.key).call((client) => client.users.invite({ payload: { role: "member", expires_in_hours: 72 } }))
    await server.as(writer.key).failsWith(Forbidden, (client) => client.users.invite({ payload: { role: "admin", expires_in_hours: 72 } }))
    await server.as(null).failsWith(Unauthorized, (client) => client.users.invitations())
  })

  it("disables a user: no sign-in, their tokens and keys refused at once; enabled, they sign in again", async () => {
    const made = await server.as(admin).call((client) => client.users.create({ payload: { username: "dana", password, role: "admin" } }))
    const session = await server.as(null).call((client) => client.auth.login({ payload: { username: "dana", password } }))
    const key = await server.as(session.access_token).call((client) =>
      client.apiKeys.create({ payload: { name: "dana's", scopes: ["bots:read"] } })
    )
    await server.as(key.key).call((client) => client.bots.list())

    // Nobody disables themselves.
    const rootId = (await server.as(admin).call((client) => client.auth.me())).id
    expect(await server.as(admin).attempt((client) => client.users.update({ path: { id: rootId }, payload: { disabled: true } })))
      .toMatchObject({ _tag: "Left" })

    const disabled = await server.as(admin).call((client) => client.users.update({ path: { id: made.id }, payload: { disabled: true } }))
    expect(disabled.disabled).toBe(true)
    const refused = await login("dana", password)
    expect(Either.isLeft(refused) && (refused.left as Unauthorized).detail).toBe(
      "This account is disabled. Ask an administrator to enable it."
    )
    await server.as(session.access_token).failsWith(Unauthorized, (client) => client.auth.me())
    await server.as(key.key).failsWith(Unauthorized, (client) => client.bots.list())
    await server.as(null).failsWith(Unauthorized, (client) => client.auth.refresh({ payload: { refresh_token: session.refresh_token! } }))

    await server.as(admin).call((client) => client.users.update({ path: { id: made.id }, payload: { disabled: false } }))
    expect(Either.isRight(await login("dana", password))).toBe(true)
    await server.as(key.key).call((client) => client.bots.list())
    // The sessions a disable ended stay ended.
    await server.as(session.access_token).failsWith(Unauthorized, (client) => client.auth.me())
  })

  it("deletes a user: the keys they made are revoked with them, and stay refused", async () => {
    const made = await server.as(admin).call((client) => client.users.create({ payload: { username: "ezra", password, role: "admin" } }))
    const session = await server.as(null).call((client) => client.auth.login({ payload: { username: "ezra", password } }))
    const key = await server.as(session.access_token).call((client) =>
      client.apiKeys.create({ payload: { name: "ezra's", scopes: ["bots:read"] } })
    )
    const other = await server.as(admin).call((client) =>
      client.apiKeys.create({ payload: { name: "the admin's", scopes: ["bots:read"] } })
    )
    await server.as(key.key).call((client) => client.bots.list())

    await server.as(admin).call((client) => client.users.delete({ path: { id: made.id } }))
    await server.as(key.key).failsWith(Unauthorized, (client) => client.bots.list())
    const kept = await server.as(admin).call((client) => client.apiKeys.get({ path: { id: key.id } }))
    expect(kept).toMatchObject({ status: "revoked", owner_user_id: null })
    expect(kept.revoked_at).not.toBeNull()
    // Nobody else's key is touched.
    await server.as(other.key).call((client) => client.bots.list())
  })

  it("changes one's own password: the current one is required; the other sessions end, this one goes on", async () => {
    await server.as(admin).call((client) => client.users.create({ payload: { username: "omar", password, role: "member" } }))
    const laptop = await server.as(null).call((client) => client.auth.login({ payload: { username: "omar", password } }))
    const phone = await server.as(null).call((client) => client.auth.login({ payload: { username: "omar", password } }))

    const wrong = await server.as(laptop.access_token).failsWith(
      ValidationError,
      (client) => client.auth.changePassword({ payload: { current_password: "not it at all", new_password: "a new passphrase" } })
    )
    expect(wrong.detail[0]).toMatchObject({ loc: ["body", "current_password"], msg: "Current password is not right" })
    const short = await server.request("/auth/me/password", {
      method: "POST",
      auth: laptop.access_token,
      body: JSON.stringify({ current_password: password, new_password: "short" })
    })
    expect(short.status).toBe(422)
    expect(((await short.json()) as { detail: Array<{ loc: unknown }> }).detail[0]!.loc).toEqual(["body", "new_password"])
    await server.failsWith(
      Forbidden,
      (client) => client.auth.changePassword({ payload: { current_password: password, new_password: "a new passphrase" } })
    )

    const next = await server.as(laptop.access_token).call((client) =>
      client.auth.changePassword({ payload: { current_password: password, new_password: "a new passphrase" } })
    )
    await server.as(next.access_token).call((client) => client.auth.me())
    await server.as(phone.access_token).failsWith(Unauthorized, (client) => client.auth.me())
    await server.as(null).failsWith(Unauthorized, (client) => client.auth.refresh({ payload: { refresh_token: phone.refresh_token! } }))
    expect(Either.isLeft(await login("omar", password))).toBe(true)
    expect(Either.isRight(await login("omar", "a new passphrase"))).toBe(true)
  })

  it("resets a password by a one-time link: the user's sessions end, the link signs them in once", async () => {
    const made = await server.as(admin).call((client) => client.users.create({ payload: { username: "rita", password, role: "member" } }))
    const before = await server.as(null).call((client) => client.auth.login({ payload: { username: "rita", password } }))
    const link = await server.as(admin).call((client) =>
      client.users.resetLink({ path: { id: made.id }, payload: { expires_in_hours: 24 } })
    )
    expect(link).toMatchObject({ kind: "password_reset", user_id: made.id })
    const offer = await server.as(null).call((client) => client.auth.invitation({ path: { token: link.token } }))
    expect(offer).toMatchObject({ kind: "password_reset", username: "rita" })
    const pair = await server.as(null).call((client) =>
      client.auth.acceptInvitation({ path: { token: link.token }, payload: { password: "rita's new one" } })
    )
    expect(pair.user.username).toBe("rita")
    await server.as(before.access_token).failsWith(Unauthorized, (client) => client.auth.me())
    expect(Either.isRight(await login("rita", "rita's new one"))).toBe(true)
    const writer = await createKey(server, ["users:write"])
    const root = (await server.as(admin).call((client) => client.auth.me())).id
    await server.as(writer.key).failsWith(
      Forbidden,
      (client) => client.users.resetLink({ path: { id: root }, payload: { expires_in_hours: 24 } })
    )
  })
})
