/**
 * Widget tokens: short-lived signed tokens for a bot's embedded chat widget. The scopes are copied
 * at mint time from the scoped key configured on the bot (`api_key_id`) and carried in the token,
 * so using one needs no key lookup. The ceiling: a token never holds a scope the bot's key does not,
 * never outlives the key's expiry, and the caller minting it must itself hold every scope it copies.
 * A revoked key stops new mints at once; tokens already minted lapse within their 15 minutes.
 * The same service answers where a bot's widget may be embedded and a visitor's conversation
 * (Embedding.ts).
 */
import { Clock, Effect } from "effect"
import * as crypto from "node:crypto"
import type { PrincipalShape } from "../../auth/Principal.ts"
import { grants } from "../../auth/Scopes.ts"
import { Bots } from "../../bots/Bots.ts"
import { AppConfig } from "../../config/AppConfig.ts"
import { Forbidden } from "../../contract/Errors.ts"
import { traced } from "../../telemetry/Spans.ts"
import { ApiKeys } from "../keys/ApiKeys.ts"
import { Tokens } from "../Tokens.ts"
import { makeEmbedding } from "./Embedding.ts"
import { WidgetKeyUnusable } from "./Errors.ts"
import { type MintWidgetToken, WidgetToken } from "./Model.ts"
import { WidgetSettingsRepo } from "./Repo.ts"

export { widgetTokenMaxSeconds as widgetLifetimeSeconds } from "../../config/AppConfig.ts"

/**
 * A widget's identity: who minted it, for which bot and pin. A renderer re-minting for the same
 * pin keeps it, so the widget keeps its sessions; another minter or pin is another widget.
 */
const widgetIdentity = (caller: PrincipalShape, botId: string, pinId: string | null) =>
  crypto.createHash("sha256").update(`${caller.kind}:${caller.id}\u0001${botId}\u0001${pinId ?? ""}`).digest("hex").slice(0, 32)

const uuidShape = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

export class Widgets extends Effect.Service<Widgets>()("cairn/Widgets", {
  effect: Effect.gen(function*() {
    const bots = yield* Bots
    const keys = yield* ApiKeys
    const tokens = yield* Tokens
    const { widgetTokenLifetimeSeconds, widgetEmbedOrigins } = yield* AppConfig
    const embedding = makeEmbedding({
      repo: yield* WidgetSettingsRepo,
      bots,
      defaultOrigins: widgetEmbedOrigins
    })

    const mint = (caller: PrincipalShape, input: MintWidgetToken) =>
      Effect.gen(function*() {
        if (caller.kind === "widget") {
          return yield* new Forbidden({ detail: "A widget token cannot mint widget tokens" })
        }
        const bot = yield* bots.get(input.source_bot_id)
        const keyId = bot.api_key_id
        const noKey = new WidgetKeyUnusable({
          detail: `Bot ${bot.id} has no usable API key configured (api_key_id); widget tokens copy that key's scopes`
        })
        if (!keyId || !uuidShape.test(keyId)) return yield* noKey
        const key = yield* Effect.catchTag(keys.row(keyId), "ApiKeyNotFound", () => Effect.fail(noKey))
        const now = yield* Clock.currentTimeMillis
        if (key.revoked_at || (key.expires_at && key.expires_at.getTime() <= now)) {
          return yield* new WidgetKeyUnusable({ detail: `The API key of bot ${bot.id} is revoked or expired` })
        }
        const lacking = key.scopes.filter((scope) => !grants(caller.scopes, scope))
        if (lacking.length > 0) {
          return yield* new Forbidden({
            detail: `Cannot mint a widget token with scopes the caller lacks: ${lacking.join(", ")}`
          })
        }
        const untilKeyExpiry = key.expires_at ? Math.floor((key.expires_at.getTime() - now) / 1000) : Infinity
        const lifetime = Math.max(1, Math.min(widgetTokenLifetimeSeconds, untilKeyExpiry))
        const signed = yield* tokens.sign("widget", bot.id, key.scopes, lifetime, {
          bot_name: bot.name,
          api_key_id: key.id,
          wid: widgetIdentity(caller, bot.id, input.pin_id ?? null),
          ...(input.pin_id ? { pin_id: input.pin_id } : {})
        })
        return new WidgetToken({
          token: signed.token,
          expires_at: signed.expiresAt,
          expires_in: signed.expiresIn,
          bot_id: bot.id,
          bot_name: bot.name,
          scopes: key.scopes
        })
      })

    return traced("Widgets", { mint, ...embedding } as const)
  }),
  dependencies: [ApiKeys.Default, Bots.Default, Tokens.Default, WidgetSettingsRepo.Default]
}) {}
