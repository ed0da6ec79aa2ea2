/**
 * `cairn providers list|presets|add|models|remove`: the LLM providers. `add` starts from a preset
 * (`providerPresets`: the type and base URL of OpenAI, Anthropic, Ollama, …); its key comes from
 * `--api-key-env` (an environment variable, so it does not sit in shell history) or `--api-key`,
 * and a preset that needs one is refused without it. Keys are only ever printed masked, as the
 * server sends them.
 */
import { Args, Command, Options } from "@effect/cli"
import { Console, Effect, Option } from "effect"
import type { ModelList, ProviderView } from "../providers/Model.ts"
import { ProviderType } from "../providers/Model.ts"
import { type ProviderPreset, providerPresets } from "../providers/Presets.ts"
import { answerCommand, connect, connectionOptions } from "./Connection.ts"
import { type CliFailure, fail, jsonOption, printJson, style, table } from "./Output.ts"

const providersList = answerCommand(
  "list",
  {},
  (client) => Effect.map(client.providers.list(), ({ providers }) => providers),
  (providers) =>
    table(
      ["ID", "TYPE", "BASE URL", "KEY", "SOURCE"],
      providers.map((p) => [p.id, p.type, p.base_url, p.api_key ?? "none", `${p.source}${p.is_default ? " (default)" : ""}`])
    )
).pipe(Command.withDescription("List the providers (keys masked)"))

const providersPresets = Command.make("presets", { json: jsonOption }, ({ json }) =>
  json ? printJson(providerPresets) : Console.log(
    table(
      ["PRESET", "TYPE", "KEY", "BASE URL"],
      providerPresets.map((p) => [p.id, p.type, p.key, p.baseUrl])
    )
  )).pipe(Command.withDescription("The known providers `add --preset` takes: type, base URL, whether a key is needed"))

/** A preset by id or name, either case. */
const findPreset = (wanted: string) =>
  providerPresets.find((p) => p.id === wanted.toLowerCase() || p.label.toLowerCase() === wanted.toLowerCase())

/** The key from `--api-key` or the variable `--api-key-env` names; none when neither is given. */
const keyOf = (
  flags: { readonly apiKey: Option.Option<string>; readonly apiKeyEnv: Option.Option<string> }
): Effect.Effect<string | undefined, CliFailure> => {
  if (Option.isSome(flags.apiKey) && Option.isSome(flags.apiKeyEnv)) return fail("give --api-key or --api-key-env, not both")
  if (Option.isSome(flags.apiKeyEnv)) {
    const name = flags.apiKeyEnv.value
    const value = process.env[name]
    return value === undefined || value === "" ? fail(`the environment variable ${name} (--api-key-env) is not set`) : Effect.succeed(value)
  }
  return Effect.succeed(Option.getOrUndefined(flags.apiKey))
}

const keyMissing = (preset: ProviderPreset) =>
  `the ${preset.id} preset needs an API key (${preset.hint}): give --api-key-env VAR (read from the environment, out of shell history) or --api-key KEY`

const providersAdd = Command.make(
  "add",
  {
    ...connectionOptions,
    id: Args.text({ name: "id" }).pipe(Args.withDescription("The provider's id; its models are named <id>/<model>")),
    preset: Options.text("preset").pipe(
      Options.withDescription("A preset (`cairn providers presets`): fills the type and base URL"),
      Options.optional
    ),
    baseUrl: Options.text("base-url").pipe(Options.withDescription("The API's base URL (the preset's by default)"), Options.optional),
    type: Options.choice("type", ProviderType.literals).pipe(
      Options.withDescription("The API it speaks (the preset's, else openai)"),
      Options.optional
    ),
    apiKey: Options.text("api-key").pipe(
      Options.withDescription("The key (it stays in shell history: prefer --api-key-env)"),
      Options.optional
    ),
    apiKeyEnv: Options.text("api-key-env").pipe(Options.withDescription("The environment variable holding the key"), Options.optional),
    json: jsonOption
  },
  (flags) =>
    Effect.gen(function*() {
      let preset: ProviderPreset | undefined
      if (Option.isSome(flags.preset)) {
        preset = findPreset(flags.preset.value)
        if (preset === undefined) {
          return yield* fail(`no preset ${flags.preset.value} (there are: ${providerPresets.map((p) => p.id).join(", ")})`)
        }
      }
      const baseUrl = Option.getOrUndefined(flags.baseUrl) ?? preset?.baseUrl
      if (baseUrl === undefined) return yield* fail("give --preset or --base-url: where the provider answers")
      const apiKey = yield* keyOf(flags)
      if (apiKey === undefined && preset?.key === "required") return yield* fail(keyMissing(preset))
      const { client } = yield* connect(flags)
      const created = yield* client.providers.create({
        payload: {
          id: flags.id,
          type: Option.getOrUndefined(flags.type) ?? preset?.type ?? "openai",
          base_url: baseUrl,
          extra_headers: {},
          models: [],
          ...(apiKey === undefined ? {} : { api_key: apiKey })
        }
      })
      if (flags.json) return yield* printJson(created)
      yield* Console.log(describeAdded(created, preset))
    })
).pipe(Command.withDescription("Add a provider, from a preset or a base URL"))

const describeAdded = (provider: ProviderView, preset: ProviderPreset | undefined) =>
  [
    `${style.green("Added")} the provider ${provider.id} (${provider.type}, ${provider.base_url}), key ${provider.api_key ?? "none"}`,
    `  Its models: cairn providers models ${provider.id}${preset ? ` (for example ${provider.id}/${preset.exampleModel})` : ""}`
  ].join("\n")

const price = (value: number | null) => (value === null ? "-" : `$${value}`)

const renderModels = (list: ModelList) =>
  [
    list.models.length === 0 ? "No models." : table(
      ["MODEL", "INPUT/M", "OUTPUT/M", "LISTED BY"],
      list.models.map((m) => [m.id, price(m.input_price_per_million), price(m.output_price_per_million), m.sources.join(",")])
    ),
    ...(list.upstream_error === null ? [] : [style.yellow(`The provider's own list could not be read: ${list.upstream_error}`)])
  ].join("\n")

const providersModels = answerCommand(
  "models",
  { id: Args.text({ name: "id" }) },
  (client, { id }) => client.providers.models({ path: { id } }),
  renderModels
).pipe(Command.withDescription("A provider's models with their prices: configured here, and those it lists"))

const providersRemove = answerCommand(
  "remove",
  { id: Args.text({ name: "id" }) },
  (client, { id }) => Effect.as(client.providers.delete({ path: { id } }), { id, removed: true }),
  ({ id }) => `Removed the provider ${id}`
).pipe(Command.withDescription("Remove a provider (not the default one)"))

export const providersCommand = Command.make("providers").pipe(
  Command.withDescription("LLM providers: list, presets, add, models, remove"),
  Command.withSubcommands([providersList, providersPresets, providersAdd, providersModels, providersRemove])
)
