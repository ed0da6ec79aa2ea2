/**
 * Authentication overhead per request: the same trivial handler behind the real Authentication
 * middleware (catalogue lookup, token resolution, rate-limit check, scope check), reached without
 * credentials on a public route (the baseline) and with a scoped key, a widget token and the static
 * key on a route that needs a scope. Requests go through the platform's web handler in this process,
 * so no socket noise hides the difference; all four kinds are interleaved in one run.
 *
 *   npx tsx bench/auth.ts [--requests N] [--backend pglite|postgres]
 *
 * Reports the median and p90 of each kind and the median added over the baseline. Target: under
 * 0.3 ms median added.
 */
import { HttpApi, HttpApiBuilder, HttpApiEndpoint, HttpApiGroup, HttpServer } from "@effect/platform"
import { ConfigProvider, Effect, Layer, ManagedRuntime, Schema } from "effect"
import { ApiKeys } from "../src/access/keys/ApiKeys.ts"
import { CreateApiKey } from "../src/access/keys/Model.ts"
import { AuthServicesLive } from "../src/access/Layers.ts"
import * as AuthMiddleware from "../src/access/Middleware.ts"
import { Tokens } from "../src/access/Tokens.ts"
import { Authentication } from "../src/auth/Authentication.ts"
import { catalogueLayer } from "../src/auth/Catalogue.ts"
import { RequiredScope } from "../src/auth/RequiredScope.ts"
import { PUBLIC } from "../src/auth/Scopes.ts"
import { Bots } from "../src/bots/Bots.ts"
import * as AppConfig from "../src/config/AppConfig.ts"
import { DatabaseLive } from "../src/main.ts"
import * as ServerSecret from "../src/secrets/ServerSecret.ts"
import { Settings } from "../src/settings/Settings.ts"
import { type Backend, createTestDatabase } from "../test/support/database.ts"

const arg = (name: string, fallback: string) => {
  const at = process.argv.indexOf(`--${name}`)
  return at >= 0 && process.argv[at + 1] ? process.argv[at + 1]! : fallback
}
const REQUESTS = Number(arg("requests", "20000"))
const BACKEND = arg("backend", "pglite") as Backend
const WARMUP = 2_000
const STATIC_KEY = "bench-static-key-0123456789"

const Pong = Schema.Struct({ ok: Schema.Boolean })

class BenchGroup extends HttpApiGroup.make("bench")
  .add(HttpApiEndpoint.get("open", "/open").addSuccess(Pong).annotate(RequiredScope, PUBLIC))
  .add(HttpApiEndpoint.get("guarded", "/guarded").addSuccess(Pong).annotate(RequiredScope, "bots:read"))
  .middleware(Authentication)
{}

class BenchApi extends HttpApi.make("bench").add(BenchGroup) {}

const HandlersLive = HttpApiBuilder.group(
  BenchApi,
  "bench",
  (handlers) => handlers.handle("open", () => Effect.succeed({ ok: true })).handle("guarded", () => Effect.succeed({ ok: true }))
)

const percentile = (sorted: ReadonlyArray<number>, p: number) => sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))]!

const main = async () => {
  const db = await createTestDatabase(BACKEND)
  const env = new Map(
    Object.entries({
      API_KEY: STATIC_KEY,
      DATA_DIR: db.dataDir,
      LOG_LEVEL: "warning",
      ...(db.databaseUrl ? { DATABASE_URL: db.databaseUrl } : {})
    })
  )
  const Foundation = Layer.mergeAll(Settings.Default, ServerSecret.layer, Bots.Default)
  const Services = AuthServicesLive.pipe(Layer.provideMerge(Foundation))
  const App = HttpApiBuilder.api(BenchApi).pipe(
    Layer.provide(HandlersLive),
    Layer.provide(AuthMiddleware.layer),
    Layer.provide(catalogueLayer(BenchApi)),
    Layer.provideMerge(Services),
    Layer.provideMerge(DatabaseLive),
    Layer.provideMerge(AppConfig.layer),
    Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(env)))
  )
  // One build of the layers, shared by the web handler and the setup below (PGlite has one owner).
  const memoMap = Effect.runSync(Layer.makeMemoMap)
  const runtime = ManagedRuntime.make(App, memoMap)
  const { handler, dispose } = HttpApiBuilder.toWebHandler(Layer.mergeAll(App, HttpServer.layerContext), { memoMap })

  // Credentials made by the real services: a scoped key in the database, a widget token.
  const [scopedKey, widgetToken] = await runtime.runPromise(
    Effect.gen(function*() {
      const keys = yield* ApiKeys
      const tokens = yield* Tokens
      const created = yield* keys.create(new CreateApiKey({ name: "bench", scopes: ["bots:read"] }))
      const widget = yield* tokens.sign("widget", "bench-bot", ["bots:read"], 900)
      return [created.key, widget.token] as const
    })
  )

  const kinds = [
    { name: "public route, no credentials (baseline)", path: "/open", token: undefined },
    { name: "scoped key (ask_...)", path: "/guarded", token: scopedKey },
    { name: "widget token (JWT)", path: "/guarded", token: widgetToken },
    { name: "static key", path: "/guarded", token: STATIC_KEY }
  ] as const

  const once = async (kind: (typeof kinds)[number]) => {
    const started = process.hrtime.bigint()
    const response = await handler(
      new Request(`http://bench.local${kind.path}`, {
        headers: kind.token ? { authorization: `Bearer ${kind.token}` } : {}
      })
    )
    const body = await response.text()
    const elapsed = Number(process.hrtime.bigint() - started) / 1e6
    if (response.status !== 200) throw new Error(`${kind.name}: ${response.status} ${body}`)
    return elapsed
  }

  for (let i = 0; i < WARMUP; i++) for (const kind of kinds) await once(kind)
  const samples = kinds.map(() => [] as Array<number>)
  for (let i = 0; i < REQUESTS; i++) {
    // Rotate the order each round so no kind always follows another.
    for (let k = 0; k < kinds.length; k++) {
      const index = (i + k) % kinds.length
      samples[index]!.push(await once(kinds[index]!))
    }
  }
  await dispose()
  await runtime.dispose()
  await db.drop()

  const medians = samples.map((s) => percentile([...s].sort((a, b) => a - b), 50))
  const lines = [
    `backend: ${BACKEND}, requests per kind: ${REQUESTS} (after ${WARMUP} warm-up rounds), node ${process.version}`,
    "",
    "| request | median ms | p90 ms | p99 ms | median added ms | ratio to baseline |",
    "|---|---|---|---|---|---|"
  ]
  kinds.forEach((kind, i) => {
    const sorted = [...samples[i]!].sort((a, b) => a - b)
    const added = medians[i]! - medians[0]!
    lines.push(
      `| ${kind.name} | ${percentile(sorted, 50).toFixed(4)} | ${percentile(sorted, 90).toFixed(4)} | ${
        percentile(sorted, 99).toFixed(4)
      } | ${i === 0 ? "-" : added.toFixed(4)} | ${(medians[i]! / medians[0]!).toFixed(2)} |`
    )
  })
  const worst = Math.max(...medians.slice(1).map((m) => m - medians[0]!))
  lines.push("", `Largest median added: ${worst.toFixed(4)} ms (target < 0.3 ms): ${worst < 0.3 ? "met" : "NOT met"}`)
  console.log(lines.join("\n"))
}

main().catch((error) => {
  console.error(error)
  process.exit(1)
})
