/** `cairn bots list|show|apply` and `cairn tasks list|show|cancel`. */
import { Args, Command, Options } from "@effect/cli"
import { FileSystem } from "@effect/platform"
import { Console, Effect, Option, Schema } from "effect"
import * as Yaml from "yaml"
import { BotConfig, CreateBot, UpdateBot } from "../bots/Model.ts"
import { TaskStatus } from "../tasks/Model.ts"
import { answerCommand, connect, connectionOptions } from "./Connection.ts"
import { fail, inline, jsonOption, printJson, style, table } from "./Output.ts"

const botsList = answerCommand(
  "list",
  {},
  (client) => Effect.map(client.bots.list(), ({ bots }) => bots),
  (bots) =>
    table(
      ["ID", "NAME", "MODEL", "SOURCE", "TOOLS"],
      bots.map((bot) => [bot.id, bot.name, bot.model ?? "(default)", bot.source, bot.tools.join(",")])
    )
).pipe(Command.withDescription("List the bots"))

// YAML, in the shape `cairn bots apply` and bots/*.yaml take back: the configuration part only.
const botsShow = answerCommand(
  "show",
  { id: Args.text({ name: "id" }) },
  (client, { id }) => client.bots.get({ path: { id } }),
  (bot) => Yaml.stringify(encodeConfig(bot)).trimEnd()
).pipe(Command.withDescription("Show a bot as YAML (the form `bots apply` reads)"))

const encodeConfig = Schema.encodeSync(BotConfig, { onExcessProperty: "ignore" })
const decodeCreate = Schema.decodeUnknown(CreateBot, { errors: "all", onExcessProperty: "error" })
const decodeUpdate = Schema.decodeUnknown(UpdateBot, { errors: "all", onExcessProperty: "error" })

const botsApply = Command.make(
  "apply",
  { ...connectionOptions, file: Args.file({ name: "file.yaml", exists: "yes" }), json: jsonOption },
  (flags) =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const text = yield* fs.readFileString(flags.file)
      const parsed = yield* Effect.try({
        try: () => Yaml.parse(text) as unknown,
        catch: (error) => new Error(`${flags.file} is not YAML: ${(error as Error).message}`)
      })
      if (typeof parsed !== "object" || parsed === null || typeof (parsed as { id?: unknown }).id !== "string") {
        return yield* fail(`${flags.file}: a bot needs an \`id\``)
      }
      const { client } = yield* connect(flags)
      const { id, ...fields } = parsed as { id: string } & Record<string, unknown>
      const existing = yield* client.bots.get({ path: { id } }).pipe(
        Effect.map(Option.some),
        Effect.catchTag("NotFound", () => Effect.succeed(Option.none()))
      )
      const [verb, bot] = Option.isSome(existing)
        ? (["Updated", yield* client.bots.update({ path: { id }, payload: yield* decodeUpdate(fields) })] as const)
        : (["Created", yield* client.bots.create({ payload: yield* decodeCreate(parsed) })] as const)
      if (flags.json) return yield* printJson(bot)
      yield* Console.log(`${style.green(verb)} the bot ${bot.id} (${bot.name})`)
    })
).pipe(Command.withDescription("Create a bot from a YAML file, or update the one with its id"))

export const botsCommand = Command.make("bots").pipe(
  Command.withDescription("Bots: list, show, apply"),
  Command.withSubcommands([botsList, botsShow, botsApply])
)

const taskRow = (task: { id: string; status: string; bot_id: string; source: string; created_at: Date; prompt: string }) => [
  task.id,
  task.status,
  task.bot_id,
  task.source,
  task.created_at.toISOString().slice(0, 16),
  inline(task.prompt, 200)
]

const tasksList = answerCommand(
  "list",
  {
    status: Options.choice("status", TaskStatus.literals).pipe(Options.optional),
    bot: Options.text("bot").pipe(Options.optional),
    session: Options.text("session").pipe(Options.optional),
    limit: Options.integer("limit").pipe(Options.withDefault(50))
  },
  (client, flags) =>
    client.tasks.list({
      urlParams: {
        limit: flags.limit,
        ...(Option.isSome(flags.status) ? { status: flags.status.value } : {}),
        ...(Option.isSome(flags.bot) ? { bot_id: flags.bot.value } : {}),
        ...(Option.isSome(flags.session) ? { session_id: flags.session.value } : {})
      }
    }),
  (tasks) => (tasks.length === 0 ? "No tasks." : table(["ID", "STATUS", "BOT", "SOURCE", "CREATED", "PROMPT"], tasks.map(taskRow)))
).pipe(Command.withDescription("List tasks, newest first"))

const tasksShow = answerCommand(
  "show",
  { id: Args.text({ name: "id" }) },
  (client, { id }) => client.tasks.get({ path: { id } }),
  (task) =>
    [
      `${style.bold("task")}      ${task.id}`,
      `${style.bold("status")}    ${task.status} (attempts ${task.attempts})`,
      `${style.bold("bot")}       ${task.bot_id} · session ${task.session_id}`,
      `${style.bold("source")}    ${task.source} · dispatch ${task.dispatch_type} (${task.delivery_status})`,
      `${style.bold("created")}   ${task.created_at.toISOString()}${task.completed_at ? ` · done ${task.completed_at.toISOString()}` : ""}`,
      `${style.bold("prompt")}    ${task.prompt}`,
      ...(task.result !== null ? [`${style.bold("result")}    ${task.result}`] : []),
      ...(task.error !== null ? [`${style.bold("error")}     ${style.red(task.error)}`] : [])
    ].join("\n")
).pipe(Command.withDescription("Show a task: its prompt, status and result"))

const tasksCancel = answerCommand(
  "cancel",
  { id: Args.text({ name: "id" }) },
  (client, { id }) => client.tasks.cancel({ path: { id } }),
  (task) => `Cancelled task ${task.id}`
).pipe(Command.withDescription("Cancel a pending task"))

export const tasksCommand = Command.make("tasks").pipe(
  Command.withDescription("Tasks: list, show, cancel"),
  Command.withSubcommands([tasksList, tasksShow, tasksCancel])
)
