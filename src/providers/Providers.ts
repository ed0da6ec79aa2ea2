/**
 * The provider registry: the default provider from OPENAI_BASE_URL / OPENAI_API_KEY, `anthropic` and
 * `gemini` from ANTHROPIC_API_KEY / GEMINI_API_KEY when set, and the providers stored through the
 * admin API, each speaking its family's API (`Family.ts`). Model ids are "provider/model"; an id whose first segment
 * is not a provider (a bare "gpt-4o", or a router's "openai/gpt-4o") goes to the default provider.
 * Lookups read a snapshot cached for at most `refreshMs` (changes made here are seen at once).
 */
import { Effect, Option, Redacted } from "effect"
import { AppConfig } from "../config/AppConfig.ts"
import { ValidationError, ValidationIssue } from "../contract/Errors.ts"
import { Bus } from "../db/Bus.ts"
import { makeSharedSnapshot } from "../db/Snapshot.ts"
import { mask } from "../secrets/Mask.ts"
import { maskUrl, openUrl, sameOrigin, sealUrl, unmaskUrl } from "../secrets/UrlSecrets.ts"
import { makeKeyVault } from "../secrets/Vault.ts"
import { traced } from "../telemetry/Spans.ts"
import { ProviderConflict, ProviderNotFound } from "./Errors.ts"
import { type Family, loadedOnUse } from "./Family.ts"
import { LlmConfig } from "./LlmConfig.ts"
import { layer as LlmConfigLive } from "./LlmConfig.ts"
import {
  type CreateProvider,
  LlmError,
  ModelEntry,
  ModelList,
  ProviderModel,
  type ProviderType,
  ProviderView,
  type UpdateProvider
} from "./Model.ts"
import { OpenAiClient } from "./OpenAiClient.ts"
import { type ProviderRow, ProvidersRepo } from "./Repo.ts"
import { sensitiveHeader } from "./Secrets.ts"
import { openAiFamily } from "./Upstream.ts"

export const DEFAULT_PROVIDER_ID = "default"
export const refreshMs = 2_000

export interface Provider {
  readonly id: string
  readonly type: ProviderType
  readonly isDefault: boolean
  /** Set from the environment (OPENAI_*, ANTHROPIC_*, GEMINI_*): read-only through the API. */
  readonly fromEnvironment: boolean
  readonly baseUrl: string
  /** The key in clear, for the client and for scrubbing messages; never shown. */
  readonly apiKey: string | undefined
  readonly extraHeaders: Readonly<Record<string, string>>
  readonly models: ReadonlyArray<ProviderModel>
  readonly family: Family
}

/** A model resolved to the provider that serves it. */
export interface Target {
  readonly provider: Provider
  /** The model id the provider knows. */
  readonly model: string
  /** The id callers use: bare for the default provider, else "provider/model". */
  readonly id: string
}

export const publicModelId = (provider: Provider, model: string) => provider.isDefault ? model : `${provider.id}/${model}`

import { priceOf } from "./ModelTraits.ts"

export { acceptsImages, costOf, priceOf } from "./ModelTraits.ts"

const environmentNames: Readonly<Record<ProviderType, string>> = {
  openai: "OPENAI_BASE_URL and OPENAI_API_KEY",
  anthropic: "ANTHROPIC_BASE_URL and ANTHROPIC_API_KEY",
  gemini: "GEMINI_BASE_URL and GEMINI_API_KEY"
}

const readOnly = (provider: Provider) =>
  new ProviderConflict({
    detail: `The provider ${provider.id} is configured by ${environmentNames[provider.type]} and cannot be changed here`
  })

export class Providers extends Effect.Service<Providers>()("cairn/Providers", {
  scoped: Effect.gen(function*() {
    const repo = yield* ProvidersRepo
    const config = yield* AppConfig
    const llmConfig = yield* LlmConfig
    const vault = yield* makeKeyVault
    // A base URL an older release stored with a credential in the clear is sealed once, here.
    yield* repo.resealBaseUrls((url) => sealUrl(url, vault))

    // Connections are reused while a provider's family and connection settings stay the same.
    const families = new Map<string, Family>()
    const familyFor = (type: ProviderType, baseUrl: string, apiKey: string | undefined, headers: Record<string, string>) => {
      const cacheKey = JSON.stringify([type, baseUrl, apiKey ?? "", headers])
      let family = families.get(cacheKey)
      if (!family) {
        const connection = { baseUrl, apiKey, headers, timeoutMs: llmConfig.timeoutMs }
        family = type === "anthropic"
          ? loadedOnUse(() =>
            import("./Anthropic.ts").then(({ anthropicFamily }) =>
              anthropicFamily({ ...connection, defaultMaxTokens: llmConfig.defaultMaxTokens, promptCaching: llmConfig.promptCaching })
            )
          )
          : type === "gemini"
          ? loadedOnUse(() => import("./Gemini.ts").then(({ geminiFamily }) => geminiFamily(connection)))
          // Local servers (Ollama, vLLM) may take no key: then no authorization header is sent.
          : openAiFamily(new OpenAiClient(connection))
        families.set(cacheKey, family)
      }
      return family
    }

    const keyOf = (key: Option.Option<Redacted.Redacted<string>>) => {
      const value = Option.getOrUndefined(Option.map(key, Redacted.value))
      return value && value.length > 0 ? value : undefined
    }
    const environmentProvider = (id: string, type: ProviderType, baseUrl: string, apiKey: string | undefined): Provider => ({
      id,
      type,
      isDefault: id === DEFAULT_PROVIDER_ID,
      fromEnvironment: true,
      baseUrl,
      apiKey,
      extraHeaders: {},
      models: [],
      family: familyFor(type, baseUrl, apiKey, {})
    })
    const defaultProvider = environmentProvider(DEFAULT_PROVIDER_ID, "openai", config.openaiBaseUrl, keyOf(config.openaiApiKey))
    const environmentProviders: ReadonlyArray<Provider> = [
      defaultProvider,
      ...(["anthropic", "gemini"] as const).flatMap((type) => {
        const apiKey = keyOf(llmConfig[type].apiKey)
        return apiKey ? [environmentProvider(type, type, llmConfig[type].baseUrl, apiKey)] : []
      })
    ]

    /** Header values are encrypted at rest too: they may carry credentials (`api-key`, ...). */
    const encryptHeaders = (headers: Readonly<Record<string, string>>) =>
      Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, vault.encrypt(value)]))

    /** A provider from its row; `unreadable` lists what the current server secret cannot decrypt. */
    const fromRow = (row: ProviderRow, unreadable: Array<string>): Provider => {
      const apiKey = row.api_key_encrypted === null ? undefined : vault.decrypt(row.api_key_encrypted)
      if (row.api_key_encrypted !== null && apiKey === undefined) unreadable.push(`${row.id}: api_key`)
      const extraHeaders: Record<string, string> = {}
      for (const [name, stored] of Object.entries(row.extra_headers)) {
        const value = vault.decrypt(stored)
        if (value === undefined) unreadable.push(`${row.id}: header ${name}`)
        else extraHeaders[name] = value
      }
      // A credential in the URL's query is sealed like the key.
      const baseUrl = openUrl(row.base_url, vault, () => unreadable.push(`${row.id}: base_url`))
      const type = row.type as ProviderType
      return {
        id: row.id,
        type,
        isDefault: false,
        fromEnvironment: false,
        baseUrl,
        apiKey,
        extraHeaders,
        models: row.models.map((m) => new ProviderModel(m)),
        family: familyFor(type, baseUrl, apiKey, extraHeaders)
      }
    }

    type Registry = { readonly byId: ReadonlyMap<string, Provider>; readonly rows: ReadonlyMap<string, ProviderRow> }
    const registry = yield* makeSharedSnapshot(
      "providers",
      Effect.gen(function*() {
        const rows = yield* repo.all
        const byId = new Map<string, Provider>(environmentProviders.map((provider) => [provider.id, provider]))
        const unreadable: Array<string> = []
        // The environment's win over a stored provider of the same id (one stored before the key was set).
        for (const row of rows) if (!byId.has(row.id)) byId.set(row.id, fromRow(row, unreadable))
        if (unreadable.length > 0) {
          yield* Effect.logWarning(
            "Stored provider secrets cannot be decrypted (the server secret changed?); they are left out until set again"
          ).pipe(Effect.annotateLogs({ secrets: unreadable.join(", ") }))
        }
        const loaded: Registry = { byId, rows: new Map(rows.map((r) => [r.id, r])) }
        return loaded
      }),
      refreshMs
    )
    const reload = registry.refresh
    const current = registry.get

    const splitModelId = (byId: ReadonlyMap<string, Provider>, modelId: string): Target => {
      const slash = modelId.indexOf("/")
      if (slash > 0) {
        const provider = byId.get(modelId.slice(0, slash))
        const model = modelId.slice(slash + 1)
        if (provider && model.length > 0) return { provider, model, id: publicModelId(provider, model) }
      }
      return { provider: defaultProvider, model: modelId, id: modelId }
    }

    /** Where a model id goes; undefined means DEFAULT_MODEL. */
    const resolve = (modelId: string | undefined, fallbackDefault = config.defaultModel) =>
      Effect.suspend(() => {
        const id = (modelId ?? fallbackDefault).trim()
        if (id.length === 0) return Effect.fail(new LlmError({ kind: "unknown_model", detail: "Empty model id" }))
        return registry.read((snapshot) => splitModelId(snapshot.byId, id))
      })

    const view = (provider: Provider): ProviderView =>
      new ProviderView({
        id: provider.id,
        type: provider.type,
        base_url: maskUrl(provider.baseUrl),
        api_key: provider.apiKey === undefined ? null : mask(provider.apiKey),
        extra_headers: maskHeaders(provider.extraHeaders),
        models: provider.models,
        source: provider.fromEnvironment ? "environment" : "stored",
        is_default: provider.isDefault
      })

    const list = Effect.map(current, (snapshot) => [...snapshot.byId.values()].map(view))

    const find = (id: string) =>
      Effect.flatMap(current, (snapshot) => {
        const provider = snapshot.byId.get(id)
        return provider ? Effect.succeed(provider) : Effect.fail(new ProviderNotFound({ detail: `Unknown provider: ${id}` }))
      })

    const get = (id: string) => Effect.map(find(id), view)

    const create = (input: CreateProvider) =>
      Effect.gen(function*() {
        const existing = (yield* current).byId.get(input.id)
        if (existing?.fromEnvironment) return yield* readOnly(existing)
        const row: ProviderRow = {
          id: input.id,
          type: input.type,
          base_url: sealUrl(input.base_url, vault),
          api_key_encrypted: input.api_key ? vault.encrypt(input.api_key) : null,
          extra_headers: encryptHeaders(input.extra_headers),
          models: input.models.map(modelRow)
        }
        if (!(yield* repo.insert(row))) return yield* new ProviderConflict({ detail: `A provider with id ${input.id} exists` })
        const snapshot = yield* reload
        return view(snapshot.byId.get(input.id)!)
      })

    const update = (id: string, input: UpdateProvider) =>
      Effect.gen(function*() {
        const snapshot = yield* reload
        const fixed = snapshot.byId.get(id)
        if (fixed?.fromEnvironment) return yield* readOnly(fixed)
        const existing = snapshot.rows.get(id)
        const provider = snapshot.byId.get(id)
        if (!existing || !provider) return yield* new ProviderNotFound({ detail: `Unknown provider: ${id}` })
        // Omitted, or the masked value a read showed: keep the stored key.
        const keep = input.api_key === undefined || (provider.apiKey !== undefined && input.api_key === mask(provider.apiKey))
        // A stored credential goes only where it went before: a new origin must be given it again.
        // A credential of the URL sent back masked keeps the stored one (same origin only).
        const baseUrl = unmaskUrl(input.base_url, provider.baseUrl)
        if (baseUrl === undefined) {
          return yield* ValidationError.single(
            ["body", "base_url"],
            "A credential of base_url was sent masked with none stored for it on that origin: send it again in the clear"
          )
        }
        if (!sameOrigin(existing.base_url, input.base_url)) {
          const carried = carriedCredentials(input, keep && existing.api_key_encrypted !== null, provider.extraHeaders)
          if (carried.length > 0) return yield* new ValidationError({ detail: carried })
        }
        const row: ProviderRow = {
          id,
          type: input.type,
          base_url: sealUrl(baseUrl, vault),
          api_key_encrypted: keep ? existing.api_key_encrypted : input.api_key ? vault.encrypt(input.api_key) : null,
          extra_headers: encryptHeaders(unmaskHeaders(input.extra_headers, provider.extraHeaders)),
          models: input.models.map(modelRow)
        }
        if (!(yield* repo.update(row))) return yield* new ProviderNotFound({ detail: `Unknown provider: ${id}` })
        return view((yield* reload).byId.get(id)!)
      })

    const remove = (id: string) =>
      Effect.gen(function*() {
        const fixed = (yield* current).byId.get(id)
        if (fixed?.fromEnvironment) return yield* readOnly(fixed)
        if (!(yield* repo.remove(id))) return yield* new ProviderNotFound({ detail: `Unknown provider: ${id}` })
        yield* reload
      })

    /** The configured models, merged with what the provider's /models lists (when it answers). */
    const models = (id: string) =>
      Effect.gen(function*() {
        const provider = yield* find(id)
        const upstream = yield* provider.family.models(provider, Math.min(llmConfig.timeoutMs, 10_000)).pipe(Effect.either)
        const entries = new Map<string, { model: string; sources: Set<"configured" | "upstream"> }>()
        for (const m of provider.models) entries.set(m.id, { model: m.id, sources: new Set(["configured"]) })
        if (upstream._tag === "Right") {
          for (const modelId of upstream.right) {
            const entry = entries.get(modelId) ?? { model: modelId, sources: new Set() }
            entry.sources.add("upstream")
            entries.set(modelId, entry)
          }
        }
        return new ModelList({
          provider_id: provider.id,
          models: [...entries.values()].map((entry) => {
            const price = priceOf({ provider, model: entry.model, id: entry.model })
            return new ModelEntry({
              id: publicModelId(provider, entry.model),
              model: entry.model,
              input_price_per_million: price?.inputPerMillion ?? null,
              output_price_per_million: price?.outputPerMillion ?? null,
              sources: [...entry.sources]
            })
          }),
          upstream_error: upstream._tag === "Left" ? upstream.left : null
        })
      })

    return traced("Providers", { resolve, list, get, create, update, remove, models, defaultModel: config.defaultModel } as const)
  }),
  dependencies: [ProvidersRepo.Default, LlmConfigLive, Bus.Default]
}) {}

const maskHeaders = (headers: Readonly<Record<string, string>>): Record<string, string> =>
  Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, sensitiveHeader(name) ? mask(value) : value]))

const moved = "base_url moves to another origin (scheme, host, port), where stored credentials are not sent"

/** What an update would carry to a new origin: the kept key and sensitive headers sent back masked. */
const carriedCredentials = (
  input: UpdateProvider,
  keepsStoredKey: boolean,
  storedHeaders: Readonly<Record<string, string>>
): Array<ValidationIssue> => {
  const issues: Array<ValidationIssue> = []
  if (keepsStoredKey) {
    issues.push(
      new ValidationIssue({
        loc: ["body", "api_key"],
        msg: `${moved}: send api_key again in the clear, or null to remove it`,
        type: "value_error"
      })
    )
  }
  for (const [name, value] of Object.entries(input.extra_headers)) {
    const stored = storedHeaders[name]
    if (stored !== undefined && sensitiveHeader(name) && value === mask(stored)) {
      issues.push(
        new ValidationIssue({
          loc: ["body", "extra_headers", name],
          msg: `${moved}: send header ${name} again in the clear, or leave it out`,
          type: "value_error"
        })
      )
    }
  }
  return issues
}

/** A sensitive header sent back masked, as a read showed it, keeps its stored value. */
const unmaskHeaders = (sent: Readonly<Record<string, string>>, stored: Readonly<Record<string, string>>) =>
  Object.fromEntries(
    Object.entries(sent).map(([name, value]) => {
      const current = stored[name]
      return [name, current !== undefined && sensitiveHeader(name) && value === mask(current) ? current : value]
    })
  )

const modelRow = (m: ProviderModel) => ({
  id: m.id,
  input_price_per_million: m.input_price_per_million,
  output_price_per_million: m.output_price_per_million,
  cache_read_price_per_million: m.cache_read_price_per_million,
  cache_write_price_per_million: m.cache_write_price_per_million,
  vision: m.vision
})
