/** `cairn login` (where and with which key the client commands connect) and `cairn keys`. */
import { Args, Command, Options, Prompt } from "@effect/cli"
import { Array as Arr, Console, Effect, Option, Redacted } from "effect"
import * as os from "node:os"
import { isScope } from "../auth/Scopes.ts"
import { answerCommand, type ConfigFile, connect, connectionOptions, readConfigFile, resolveFrom, writeConfigFile } from "./Connection.ts"
import { wholeId } from "./Ids.ts"
import { fail, jsonOption, printJson, style, table } from "./Output.ts"

/**
 * A password sign-in turned into a key for this CLI: the session signs in, makes a key with the
 * user's scopes (keys are an admin's to make) and signs out again, so only the key is kept.
 */
const keyForUser = (baseUrl: string, username: string) =>
  Effect.gen(function*() {
    const password = Redacted.value(yield* Prompt.password({ message: `Password for ${username} at ${baseUrl}` }))
    const { client: anonymous } = yield* connect({ url: Option.some(baseUrl), key: Option.none() })
    const tokens = yield* anonymous.auth.login({ payload: { username, password } }).pipe(
      Effect.catchTag("Unauthorized", () => fail(`${baseUrl} refused the username or the password`))
    )
    const { client } = yield* connect({ url: Option.some(baseUrl), key: Option.some(tokens.access_token) })
    const signOut = client.auth.logout({ payload: { refresh_token: tokens.refresh_token, everywhere: false } }).pipe(Effect.ignore)
    return yield* Effect.gen(function*() {
      const me = yield* client.auth.me()
      if (!me.scopes.includes("admin")) {
        return yield* fail(
          `${username} is not an admin, and only an admin makes keys: ask one for a key (cairn keys create) and run cairn login --key`
        )
      }
      const created = yield* client.apiKeys.create({
        payload: { name: `cairn CLI (${username}@${os.hostname()})`, scopes: me.scopes.filter(isScope) }
      })
      return created.key
    }).pipe(Effect.ensuring(signOut))
  })

export const loginCommand = Command.make(
  "login",
  {
    ...connectionOptions,
    username: Options.text("username").pipe(
      Options.withAlias("u"),
      Options.withDescription("Sign in as this user (the password is asked for) and save a key made for this CLI"),
      Options.optional
    ),
    bot: Options.text("bot").pipe(Options.withDescription("The bot `cairn chat` talks to by default"), Options.optional)
  },
  (flags) =>
    Effect.gen(function*() {
      // The server as the other commands find it; the key only from --key, a sign-in or asked for,
      // never an old one. A file that does not parse is replaced.
      const previous = yield* readConfigFile.pipe(Effect.orElseSucceed((): ConfigFile => ({})))
      const resolved = resolveFrom({ ...flags, key: Option.none() }, previous)
      const keyText = Option.isSome(flags.key)
        ? flags.key.value
        : Option.isSome(flags.username)
        ? yield* keyForUser(resolved.baseUrl, flags.username.value)
        : Redacted.value(yield* Prompt.password({ message: `API key for ${resolved.baseUrl}` }))
      const { client } = yield* connect({ url: Option.some(resolved.baseUrl), key: Option.some(keyText) })
      // The key is checked before it is written: a wrong one is refused here, not at the next chat.
      const me = yield* client.auth.me()
      const file = yield* writeConfigFile({
        ...previous,
        url: resolved.baseUrl,
        key: keyText,
        ...(Option.isSome(flags.bot) ? { bot: flags.bot.value } : {})
      })
      yield* Console.log(
        `Logged in to ${resolved.baseUrl} with a ${me.kind.replace("_", " ")} (${me.scopes.length} scopes); saved to ${file}`
      )
    })
).pipe(
  Command.withDescription(
    "Sign in to a server (with --username and a password, or an API key) and save it for the other commands"
  )
)

const splitList = (text: string) =>
  text
    .split(",")
    .map((item) => item.trim())
    .filter((item) => item.length > 0)

const keysCreate = Command.make(
  "create",
  {
    ...connectionOptions,
    name: Options.text("name").pipe(Options.withDescription("What the key is for"), Options.optional),
    preset: Options.text("preset").pipe(
      Options.withDescription("A scope preset, by name or id (`Chat Client`, `chat_client`, …)"),
      Options.optional
    ),
    scopes: Options.text("scopes").pipe(Options.withDescription("Scopes, comma-separated (added to the preset's)"), Options.optional),
    expires: Options.date("expires").pipe(Options.withDescription("When the key stops working (ISO date)"), Options.optional),
    json: jsonOption
  },
  (flags) =>
    Effect.gen(function*() {
      const { client } = yield* connect(flags)
      const scopes = new Set(Option.match(flags.scopes, { onNone: () => [], onSome: splitList }))
      let presetName: string | undefined
      if (Option.isSome(flags.preset)) {
        const wanted = flags.preset.value.toLowerCase()
        const { presets } = yield* client.discover.scopes()
        const preset = presets.find((p) => p.id.toLowerCase() === wanted || p.name.toLowerCase() === wanted)
        if (preset === undefined) {
          return yield* fail(`no preset ${flags.preset.value} (there are: ${presets.map((p) => p.name).join(", ")})`)
        }
        presetName = preset.name
        for (const scope of preset.scopes) scopes.add(scope)
      }
      if (scopes.size === 0) return yield* fail("give --preset or --scopes: a key with no scope can do nothing")
      // Names from the command line (and the server's presets) are checked against the catalogue here.
      const [unknown, known] = Arr.partition(scopes, isScope)
      if (unknown.length > 0) {
        return yield* fail(`unknown scope${unknown.length === 1 ? "" : "s"}: ${unknown.join(", ")} (GET /api/v1/scopes lists them)`)
      }
      const name = Option.getOrElse(flags.name, () => presetName ?? "cairn CLI key")
      const created = yield* client.apiKeys.create({
        payload: { name, scopes: known, ...(Option.isSome(flags.expires) ? { expires_at: flags.expires.value } : {}) }
      })
      if (flags.json) return yield* printJson(created)
      yield* Console.log(
        `${style.green("Created")} ${created.name} (${created.id})\n  scopes: ${created.scopes.join(", ")}\n\n  ${
          style.bold(created.key)
        }\n\n${style.yellow("  The key is shown this once; it is stored only as a hash.")}`
      )
    })
).pipe(Command.withDescription("Create a scoped API key (printed once)"))

const keysList = answerCommand(
  "list",
  {},
  (client) => Effect.map(client.apiKeys.list(), ({ keys }) => keys),
  (keys) =>
    keys.length === 0
      ? "No keys."
      : table(
        ["ID", "NAME", "PREFIX", "STATUS", "LAST USED", "SCOPES"],
        keys.map((
          key
        ) => [key.id, key.name, key.prefix, key.status, key.last_used_at?.toISOString().slice(0, 16) ?? "never", key.scopes.join(",")])
      )
).pipe(Command.withDescription("List the API keys (never their values)"))

const keysRevoke = answerCommand(
  "revoke",
  { id: Args.text({ name: "id" }).pipe(Args.withDescription("The key's id, or the start of it")) },
  (client, { id }) =>
    Effect.flatMap(
      wholeId("key", id, Effect.map(client.apiKeys.list(), ({ keys }) => keys.map((key) => key.id))),
      (id) => client.apiKeys.revoke({ path: { id } })
    ),
  (revoked) => `Revoked ${revoked.name} (${revoked.id})`
).pipe(Command.withDescription("Revoke an API key at once"))

export const keysCommand = Command.make("keys").pipe(
  Command.withDescription("Scoped API keys: create, list, revoke"),
  Command.withSubcommands([keysCreate, keysList, keysRevoke])
)
