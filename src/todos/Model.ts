/** Todos as the API shows and takes them. */
import { Schema } from "effect"
import { limitParam, queryParams } from "../contract/Params.ts"
import { Timestamp } from "../contract/Time.ts"

const Status = Schema.Literal("open", "done")
const Title = Schema.String.pipe(
  Schema.trimmed({ message: () => "title must not start or end with spaces" }),
  Schema.minLength(1),
  Schema.maxLength(500)
)
const Notes = Schema.String.pipe(Schema.maxLength(20_000))

export class Todo extends Schema.Class<Todo>("Todo")({
  id: Schema.UUID,
  title: Schema.String,
  notes: Schema.String,
  status: Status,
  due_at: Schema.NullOr(Timestamp),
  bot_id: Schema.String,
  channel_id: Schema.NullOr(Schema.UUID),
  session_id: Schema.NullOr(Schema.UUID),
  /** `bot:<id>` for the bot's todos tool, else the caller that made it (`scoped_key:<id>`, `user:<id>`, `static`). */
  created_by: Schema.String,
  created_at: Timestamp,
  updated_at: Timestamp,
  completed_at: Schema.NullOr(Timestamp)
}) {}

export const TodoQuery = queryParams({
  bot_id: Schema.optional(Schema.String),
  channel_id: Schema.optional(Schema.UUID),
  status: Schema.optional(Status),
  limit: limitParam()
})

/** Unknown fields are refused: a typo never looks like a success. */
const strict = [undefined, undefined, { parseOptions: { errors: "all", onExcessProperty: "error" } }] as const

export class CreateTodo extends Schema.Class<CreateTodo>("CreateTodo")({
  title: Title,
  notes: Schema.optionalWith(Notes, { default: () => "" }),
  /** ISO 8601 date or date-time. */
  due_at: Schema.optionalWith(Schema.NullOr(Schema.Date), { default: () => null }),
  /** The bot whose list it joins; default `default`. */
  bot_id: Schema.optionalWith(Schema.String.pipe(Schema.minLength(1)), { default: () => "default" }),
  channel_id: Schema.optionalWith(Schema.NullOr(Schema.UUID), { default: () => null })
}, strict) {}

export class UpdateTodo extends Schema.Class<UpdateTodo>("UpdateTodo")({
  title: Schema.optional(Title),
  notes: Schema.optional(Notes),
  status: Schema.optional(Status),
  due_at: Schema.optional(Schema.NullOr(Schema.Date))
}, strict) {}
