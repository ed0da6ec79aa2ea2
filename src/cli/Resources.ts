/** `cairn bots list|show|apply` and `cairn tasks list|show|cancel`. */
import { Args, Command, Options } from "@effect/cli"
import { FileSystem } from "@effect/platform"
import { Console, Effect, Option, Schema } from "effect"
import * as Yaml from "yaml"
import { BotConfig, CreateBot, UpdateBot } from "../bots/Model.ts"
import type { CairnClient } from "../client.ts"
import { TaskStatus } from "../tasks/Model.ts"
import { answerCommand, connect, connectionOptions } from "./Connection.ts"
import { wholeId } from "./Ids.ts"
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
const botIds = (client: CairnClient) => Effect.map(client.bots.list(), ({ bots }) => bots.map((bot) => bot.id))

const botsShow = answerCommand(
  "show",
  { id: Args.text({ name: "id" }).pipe(Args.withDescription("The bot's id, or the start of it")) },
  (client, { id }) => Effect.flatMap(wholeId("bot", id, botIds(client)), (id) => client.bots.get({ path: { id } })),
  (bot) => Yaml.stringify(encodeConfig(bot)).trimEnd()
).pipe(Command.withDescription("Show a bot as YAML (the form `bots apply` reads)"))

const encodeConfig = Schema.encodeSync(BotConfig, { onExcessProperty: "ignore" })
const decodeCreate = Schema.decodeUnknown(CreateBot, { errors: "all", onExcessProperty: "error" })
const decodeUpdate = Schema.decodeUnknown(UpdateBot, { errors: "all", onExcessProperty: "error" })

/**
 * A bot's tools must be tools the server has: an unknown name is refused here, naming the known
 * ones, instead of a bot that silently lacks it. Credentials that may not list tools skip the check.
 */
const knownTools = (client: CairnClient, file: string, tools: unknown) =>
  Effect.gen(function*() {
    if (!Array.isArray(tools) || tools.length === 0) return
    const catalogue = yield* client.integrations.tools().pipe(Effect.option)
    if (Option.isNone(catalogue)) return
    const known = catalogue.value.map((tool) => tool.tool_name).sort()
    const unknown = tools.filter((tool) => typeof tool === "string" && !known.includes(tool))
    if (unknown.length > 0) {
      return yield* fail(
        `${file}: unknown tool${unknown.length === 1 ? "" : "s"} ${unknown.join(", ")}; the server has: ${known.join(", ")}`
      )
    }
  })

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
      yield* knownTools(client, flags.file, (parsed as { tools?: unknown }).tools)
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
    status: Options.choice("status", TaskStatus.literals).pipe(Options.withDescription("Only tasks in this state"), Options.optional),
    bot: Options.text("bot").pipe(Options.withDescription("Only this bot's tasks"), Options.optional),
    session: Options.text("session").pipe(Options.withDescription("Only this session's tasks"), Options.optional),
    limit: Options.integer("limit").pipe(Options.withDescription("At most this many (1-500)"), Options.withDefault(50))
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

/** The newest tasks' ids, where a prefix is looked for (the API lists at most 500). */
const taskIds = (client: CairnClient) =>
  Effect.map(client.tasks.list({ urlParams: { limit: 500 } }), (tasks) => tasks.map((task) => task.id))

const taskId = Args.text({ name: "id" }).pipe(Args.withDescription("The task's id, or the start of it"))

const tasksShow = answerCommand(
  "show",
  { id: taskId },
  (client, { id }) => Effect.flatMap(wholeId("task", id, taskIds(client)), (id) => client.tasks.get({ path: { id } })),
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
  { id: taskId },
  (client, { id }) => Effect.flatMap(wholeId("task", id, taskIds(client)), (id) => client.tasks.cancel({ path: { id } })),
  (task) => `Cancelled task ${task.id}`
).pipe(Command.withDescription("Cancel a pending task"))

export const tasksCommand = Command.make("tasks").pipe(
  Command.withDescription("Tasks: list, show, cancel"),
  Command.withSubcommands([tasksList, tasksShow, tasksCancel])
)
