/**
 * Where the client commands connect: `--url`/`--key`, else `CAIRN_URL`/`CAIRN_API_KEY`, else the
 * config file `cairn login` writes (`$XDG_CONFIG_HOME/cairn/config.json`, or `~/.config/...`),
 * else http://localhost:8000 with no key.
 */
import { Command, Options } from "@effect/cli"
import { FetchHttpClient, FileSystem, Path } from "@effect/platform"
import { Console, Effect, Option, Schema } from "effect"
import * as os from "node:os"
import { type CairnClient, makeClient, makeStreamingClient, type StreamingClient } from "../client.ts"
import { jsonOption, printJson } from "./Output.ts"

export const defaultUrl = "http://localhost:8000"

export const ConfigFile = Schema.Struct({
  url: Schema.optional(Schema.String),
  key: Schema.optional(Schema.String),
  bot: Schema.optional(Schema.String)
})
export type ConfigFile = typeof ConfigFile.Type

const decodeConfigFile = Schema.decode(Schema.parseJson(ConfigFile))
const encodeConfigFile = Schema.encode(Schema.parseJson(ConfigFile, { space: 2 }))

export const configPath = Effect.map(
  Path.Path,
  (path) => path.join(process.env.XDG_CONFIG_HOME || path.join(os.homedir(), ".config"), "cairn", "config.json")
)

/** The config file, or nothing when there is none; a file that does not parse is an error, not ignored. */
export const readConfigFile = Effect.gen(function*() {
  const fs = yield* FileSystem.FileSystem
  const file = yield* configPath
  if (!(yield* fs.exists(file))) return {} as ConfigFile
  return yield* fs.readFileString(file).pipe(
    Effect.flatMap(decodeConfigFile),
    Effect.mapError(() => new Error(`${file} is not a valid Cairn config file (delete it or run cairn login again)`))
  )
})

/** Written readable by its owner only: it holds a key. */
export const writeConfigFile = (config: ConfigFile) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const file = yield* configPath
    yield* fs.makeDirectory(path.dirname(file), { recursive: true, mode: 0o700 })
    yield* fs.writeFileString(file, yield* encodeConfigFile(config), { mode: 0o600 })
    yield* fs.chmod(file, 0o600)
    return file
  })

export const connectionOptions = {
  url: Options.text("url").pipe(Options.withDescription(`Cairn's address (CAIRN_URL; default ${defaultUrl})`), Options.optional),
  key: Options.text("key").pipe(Options.withDescription("An API key (CAIRN_API_KEY)"), Options.optional)
}

export interface ConnectionFlags {
  readonly url: Option.Option<string>
  readonly key: Option.Option<string>
}

export interface Connection {
  readonly baseUrl: string
  readonly apiKey: string | undefined
  readonly client: CairnClient
  readonly streams: StreamingClient
  /** The config file's default bot, if any. */
  readonly defaultBot: string | undefined
}

const fromEnv = (name: string) => Option.fromNullable(process.env[name]).pipe(Option.filter((value) => value.length > 0))

/** Where and with which key, from the flags, the environment and the config file, in that order. */
export const resolveFrom = (flags: ConnectionFlags, file: ConfigFile) => {
  const baseUrl = flags.url.pipe(
    Option.orElse(() => fromEnv("CAIRN_URL")),
    Option.orElse(() => Option.fromNullable(file.url)),
    Option.getOrElse(() => defaultUrl)
  ).replace(/\/+$/, "")
  // The saved key goes only to the server it was saved for.
  const savedKey = file.url === undefined || file.url.replace(/\/+$/, "") === baseUrl ? file.key : undefined
  const apiKey = flags.key.pipe(
    Option.orElse(() => fromEnv("CAIRN_API_KEY")),
    Option.orElse(() => Option.fromNullable(savedKey)),
    Option.getOrUndefined
  )
  return { baseUrl, apiKey, defaultBot: file.bot }
}

export const resolveConnection = (flags: ConnectionFlags) => Effect.map(readConfigFile, (file) => resolveFrom(flags, file))

export const connect = (flags: ConnectionFlags) =>
  Effect.gen(function*() {
    const { apiKey, baseUrl, defaultBot } = yield* resolveConnection(flags)
    const options = { baseUrl, ...(apiKey === undefined ? {} : { apiKey }) }
    const client = yield* makeClient(options)
    const streams = yield* makeStreamingClient(options)
    return { baseUrl, apiKey, client, streams, defaultBot } satisfies Connection
  }).pipe(Effect.provide(FetchHttpClient.layer))

/**
 * A client command that makes its call and prints the answer: the API's own object with `--json`,
 * else as `render` writes it for a person.
 */
export const answerCommand = <Name extends string, const Config extends Command.Command.Config, A, E, R>(
  name: Name,
  config: Config,
  call: (client: CairnClient, flags: Command.Command.ParseConfig<Config>) => Effect.Effect<A, E, R>,
  render: (answer: A) => string
) =>
  Command.make(name, { ...connectionOptions, json: jsonOption, args: config }, ({ args, json, key, url }) =>
    Effect.gen(function*() {
      const { client } = yield* connect({ key, url })
      const answer = yield* call(client, args as Command.Command.ParseConfig<Config>)
      yield* json ? printJson(answer) : Console.log(render(answer))
    }))
