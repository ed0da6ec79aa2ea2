/**
 * The Channels service methods the agent loop uses (no HTTP route of their own): get,
 * findByClient, ensure, setActiveSession; on both database backends.
 */
import { ConfigProvider, Context, Effect, Exit, Layer, Logger, LogLevel, Option, Scope } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { BotFilesSync, Bots } from "../../src/bots/Bots.ts"
import { Channels } from "../../src/channels/Channels.ts"
import * as AppConfig from "../../src/config/AppConfig.ts"
import * as Database from "../../src/db/Database.ts"
import * as Migrations from "../../src/db/Migrations.ts"
import { backends, createTestDatabase, type TestDatabase } from "../support/database.ts"

describe.each(backends)("Channels service (%s)", (backend) => {
  let db: TestDatabase
  let scope: Scope.CloseableScope
  let channels: Channels
  const run = <A, E>(effect: Effect.Effect<A, E>) => Effect.runPromise(effect)
  const fails = <A, E>(effect: Effect.Effect<A, E>) => Effect.runPromise(Effect.flip(effect))

  beforeAll(async () => {
    db = await createTestDatabase(backend)
    const env = new Map([["DATA_DIR", db.dataDir], ...(db.databaseUrl ? [["DATABASE_URL", db.databaseUrl] as [string, string]] : [])])
    const config = AppConfig.layer.pipe(Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(env))))
    const database = Layer.effectDiscard(Migrations.run()).pipe(Layer.provideMerge(Database.layer()))
    const layer = Channels.Default.pipe(
      Layer.provideMerge(Layer.merge(Bots.Default, BotFilesSync)),
      Layer.provide(database),
      Layer.provide(config),
      Layer.provide(Logger.minimumLogLevel(LogLevel.Warning))
    )
    scope = Effect.runSync(Scope.make())
    const context = await Effect.runPromise(Layer.buildWithScope(layer, scope))
    channels = Context.get(context, Channels)
  })
  afterAll(async () => {
    if (scope) await Effect.runPromise(Scope.close(scope, Exit.void))
    await db?.drop()
  })

  it("findByClient answers none, then the channel ensure made; ensure is idempotent", async () => {
    expect(await run(channels.findByClient("svc:1", "default"))).toEqual(Option.none())
    const made = await run(channels.ensure("svc:1", "default", "Service one"))
    expect(made.created).toBe(true)
    expect(made.channel).toMatchObject({ client_id: "svc:1", bot_id: "default", name: "Service one", active_session_id: null })
    const again = await run(channels.ensure("svc:1", "default"))
    expect(again.created).toBe(false)
    expect(again.channel).toEqual(made.channel)
    const found = await run(channels.findByClient("svc:1", "default"))
    expect(Option.getOrThrow(found)).toEqual(made.channel)
    expect(await run(channels.findByClient("svc:1", "other-bot"))).toEqual(Option.none())
  })

  it("ensure refuses an unknown bot with a validation error at body.bot_id", async () => {
    const error = await fails(channels.ensure("svc:2", "nobody"))
    expect(error._tag).toBe("ValidationError")
    expect(error._tag === "ValidationError" && error.detail[0]!.loc).toEqual(["body", "bot_id"])
  })

  it("setActiveSession points the channel at a session and clears it again", async () => {
    const { channel } = await run(channels.ensure("svc:3", "default"))
    const sessionId = "2f7d3c1a-5b6e-4f80-9a1b-2c3d4e5f6a7b"
    await run(channels.setActiveSession(channel.id, sessionId))
    const pointed = await run(channels.get(channel.id))
    expect(pointed.active_session_id).toBe(sessionId)
    expect(pointed.updated_at.getTime()).toBeGreaterThanOrEqual(channel.updated_at.getTime())
    await run(channels.setActiveSession(channel.id, null))
    expect((await run(channels.get(channel.id))).active_session_id).toBeNull()
  })

  it("get and setActiveSession fail with ChannelNotFound for an unknown channel", async () => {
    const missing = "00000000-0000-4000-8000-000000000000"
    expect((await fails(channels.get(missing)))._tag).toBe("ChannelNotFound")
    expect((await fails(channels.setActiveSession(missing, null)))._tag).toBe("ChannelNotFound")
  })
})
