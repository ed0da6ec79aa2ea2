/**
 * `cairn dead-letters list|retry|discard`: the dead-letter queue (`GET /api/v1/admin/dead-letters`)
 * from a terminal. An inbound item (a bridge message, a mail, a webhook delivery, a result
 * delivery) that exhausted its attempts is listed with its source, what it was and its last error,
 * under the counts per source; `retry` and `discard` take its id, or the start of it.
 */
import { Args, Command, Options } from "@effect/cli"
import { Effect, Option } from "effect"
import type { CairnClient } from "../client.ts"
import type { DeadLetters, InboundItem } from "../inbound/Model.ts"
import { answerCommand } from "./Connection.ts"
import { wholeId } from "./Ids.ts"
import { inline, style, table } from "./Output.ts"

export const renderDeadLetters = (answer: DeadLetters) => {
  const counts = Object.entries(answer.counts)
  const summary = counts.length === 0
    ? "No dead letters."
    : `Dead letters: ${counts.map(([source, count]) => `${source} ${count}`).join(", ")}`
  if (answer.items.length === 0) return summary
  return [
    summary,
    "",
    table(
      ["ID", "SOURCE", "WHAT", "ATTEMPTS", "SINCE", "LAST ERROR"],
      answer.items.map((item) => [
        item.id.slice(0, 8),
        item.source,
        inline(item.summary || item.external_id, 40),
        String(item.attempts),
        item.updated_at.toISOString().slice(0, 16).replace("T", " "),
        inline(item.last_error ?? item.reason ?? "", 80)
      ])
    )
  ].join("\n")
}

const list = answerCommand(
  "list",
  {
    source: Options.text("source").pipe(Options.withDescription("Only this source's (msgbridge, mailbox, dispatch ...)"), Options.optional),
    integration: Options.text("integration").pipe(Options.withDescription("Only this integration's"), Options.optional),
    channel: Options.text("channel").pipe(Options.withDescription("Only this channel's (its id)"), Options.optional),
    limit: Options.integer("limit").pipe(Options.withDescription("At most this many (1-500)"), Options.withDefault(50))
  },
  (client, flags) =>
    client.deadLetters.list({
      urlParams: {
        limit: flags.limit,
        ...(Option.isSome(flags.source) ? { source: flags.source.value } : {}),
        ...(Option.isSome(flags.integration) ? { integration: flags.integration.value } : {}),
        ...(Option.isSome(flags.channel) ? { channel_id: flags.channel.value } : {})
      }
    }),
  renderDeadLetters
).pipe(Command.withDescription("List the dead letters, newest first, with the counts per source"))

const deadIds = (client: CairnClient) =>
  Effect.map(client.deadLetters.list({ urlParams: { limit: 500 } }), (answer) => answer.items.map((item) => item.id))

const letterId = Args.text({ name: "id" }).pipe(Args.withDescription("The dead letter's id, or the start of it (as the list shows)"))

const act = (name: "retry" | "discard") =>
  answerCommand(
    name,
    { id: letterId },
    (client, { id }) =>
      Effect.flatMap(wholeId("dead letter", id, deadIds(client)), (id) =>
        name === "retry" ? client.deadLetters.retry({ path: { id } }) : client.deadLetters.discard({ path: { id } })),
    (item: InboundItem) =>
      name === "retry"
        ? `${style.green("Retried")} ${item.id}: now ${item.state}`
        : `${style.yellow("Discarded")} ${item.id}: kept, never acted on again`
  ).pipe(
    Command.withDescription(
      name === "retry"
        ? "Try a dead letter again (a run queued again, a delivery tried again, a mail given back to its integration)"
        : "Give up on a dead letter: kept as discarded, never acted on again"
    )
  )

export const deadLettersCommand = Command.make("dead-letters").pipe(
  Command.withDescription("The dead-letter queue: inbound items that exhausted their attempts; list, retry, discard"),
  Command.withSubcommands([list, act("retry"), act("discard")])
)
